// Tests of hardware-profile loading: every shipped profile loads with the figures
// its comments cite, and bad profiles fail with file:line:col and a precise message.

#include "sim/hardware_profile.h"

#include <string>

#include "testing/test_util.h"

namespace distir::sim {
namespace {

using ::distir::testing::SourcePath;
using ::distir::testing::StatusIs;

constexpr double kGiB = 1073741824.0;
constexpr double kMiB = 1048576.0;

StatusOr<HardwareProfile> LoadShipped(const std::string& name) {
  return LoadHardwareProfile(SourcePath("configs/hardware/" + name));
}

TEST(HardwareProfileTest, LoadsDgx2V100) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw, LoadShipped("dgx2-v100.yaml"));
  EXPECT_EQ(hw.name, "dgx2-v100");
  EXPECT_EQ(hw.device.name, "V100-SXM3-32GB");
  EXPECT_DOUBLE_EQ(hw.device.peak_flops_f16, 125e12);
  EXPECT_DOUBLE_EQ(hw.device.peak_flops_f32, 15.7e12);
  EXPECT_DOUBLE_EQ(hw.device.peak_flops_f64, 7.8e12);
  EXPECT_EQ(hw.device.peak_flops_bf16, 0);  // Volta: no bf16, falls back to f32
  EXPECT_DOUBLE_EQ(hw.device.MatrixFlops(DType::kBF16), 15.7e12);
  EXPECT_DOUBLE_EQ(hw.device.dram_bandwidth, 900e9);
  EXPECT_EQ(hw.device.memory_capacity, int64_t{32} << 30);  // 32768 MiB
  EXPECT_DOUBLE_EQ(hw.device.kernel_launch_overhead, 5e-6);
  EXPECT_FALSE(hw.device.matmul_regression.has_value());
  EXPECT_EQ(hw.devices_per_node, 16);
  EXPECT_EQ(hw.num_nodes, 1);
  EXPECT_EQ(hw.NumDevices(), 16);
  EXPECT_EQ(hw.intra_node.name, "NVSwitch");
  EXPECT_DOUBLE_EQ(hw.intra_node.bandwidth, 150e9);
  EXPECT_DOUBLE_EQ(hw.intra_node.latency, 3.4e-6);
  EXPECT_EQ(hw.collectives.allreduce, AllReduceAlgorithm::kRing);
  EXPECT_DOUBLE_EQ(hw.collectives.launch_overhead, 8.4e-6);
  EXPECT_EQ(hw.source_path, SourcePath("configs/hardware/dgx2-v100.yaml"));
}

TEST(HardwareProfileTest, LoadsDgxA100) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw, LoadShipped("dgx-a100.yaml"));
  EXPECT_DOUBLE_EQ(hw.device.MatrixFlops(DType::kF16), 312e12);
  EXPECT_DOUBLE_EQ(hw.device.MatrixFlops(DType::kBF16), 312e12);
  EXPECT_DOUBLE_EQ(hw.device.MatrixFlops(DType::kF32), 19.5e12);
  EXPECT_DOUBLE_EQ(hw.device.MatrixFlops(DType::kI64), 19.5e12);  // vector_flops
  EXPECT_DOUBLE_EQ(hw.device.dram_bandwidth, 1800e9);       // achievable, not the datasheet's 2039
  EXPECT_EQ(hw.device.memory_capacity, int64_t{80} << 30);  // 81920 MiB
  EXPECT_EQ(hw.devices_per_node, 8);
  EXPECT_EQ(hw.num_nodes, 0);  // any
  EXPECT_EQ(hw.NumDevices(), std::nullopt);
  EXPECT_DOUBLE_EQ(hw.intra_node.bandwidth, 230e9);  // NCCL's effective NVLink3 bandwidth
  EXPECT_DOUBLE_EQ(hw.inter_node.bandwidth, 25e9);  // 200 Gb/s / 8
  EXPECT_DOUBLE_EQ(hw.inter_node.latency, 9.6e-6);
  EXPECT_EQ(hw.collectives.allreduce, AllReduceAlgorithm::kHierarchical);
}

TEST(HardwareProfileTest, LoadsH100Sxm) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw, LoadShipped("h100-sxm.yaml"));
  EXPECT_DOUBLE_EQ(hw.device.peak_flops_bf16, 989e12);
  EXPECT_DOUBLE_EQ(hw.device.peak_flops_f32, 67e12);
  EXPECT_DOUBLE_EQ(hw.device.dram_bandwidth, 3.35e12);
  EXPECT_EQ(hw.device.memory_capacity, static_cast<int64_t>(81559 * kMiB));
  EXPECT_DOUBLE_EQ(hw.intra_node.bandwidth, 370e9);  // NCCL's effective NVLink4 bandwidth
  EXPECT_DOUBLE_EQ(hw.inter_node.bandwidth, 50e9);  // 400 Gb/s / 8
  EXPECT_EQ(hw.num_nodes, 0);
}

TEST(HardwareProfileTest, LoadsH200WithH100ComputeAndMoreMemory) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile h200, LoadShipped("h200.yaml"));
  ASSERT_OK_AND_ASSIGN(HardwareProfile h100, LoadShipped("h100-sxm.yaml"));
  EXPECT_DOUBLE_EQ(h200.device.peak_flops_f16, h100.device.peak_flops_f16);
  EXPECT_DOUBLE_EQ(h200.device.peak_flops_f32, h100.device.peak_flops_f32);
  EXPECT_DOUBLE_EQ(h200.device.dram_bandwidth, 4.8e12);
  EXPECT_EQ(h200.device.memory_capacity, static_cast<int64_t>(143771 * kMiB));
  EXPECT_GT(h200.device.memory_capacity, 140 * kGiB);
}

TEST(HardwareProfileTest, LoadsPythonCompatDefaults) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw, LoadShipped("distir-python-compat.yaml"));
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kI32}) {
    EXPECT_DOUBLE_EQ(hw.device.MatrixFlops(t), 1.4e13);
  }
  EXPECT_DOUBLE_EQ(hw.device.dram_bandwidth, 9.0e11);
  EXPECT_DOUBLE_EQ(hw.device.kernel_launch_overhead, 1e-5);
  EXPECT_DOUBLE_EQ(hw.inter_node.bandwidth, 3.125e9);  // 25 Gbps x 1.25e8 B/Gb
  EXPECT_DOUBLE_EQ(hw.intra_node.bandwidth, 3.125e9);
  EXPECT_EQ(hw.inter_node.latency, 0);
  EXPECT_EQ(hw.collectives.launch_overhead, 0);
  // Uniform topology: every pair of distinct devices uses the same link.
  EXPECT_EQ(&hw.LinkBetween(DeviceId(0), DeviceId(1)), &hw.inter_node);
  EXPECT_EQ(&hw.LinkBetween(DeviceId(5), DeviceId(900)), &hw.inter_node);
}

TEST(HardwareProfileTest, DevicesMapOntoNodesInOrder) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw, LoadShipped("dgx-a100.yaml"));
  EXPECT_EQ(hw.NodeOf(DeviceId(0)), 0);
  EXPECT_EQ(hw.NodeOf(DeviceId(7)), 0);
  EXPECT_EQ(hw.NodeOf(DeviceId(8)), 1);
  EXPECT_EQ(hw.NodeOf(DeviceId(23)), 2);
  EXPECT_EQ(&hw.LinkBetween(DeviceId(0), DeviceId(7)), &hw.intra_node);
  EXPECT_EQ(&hw.LinkBetween(DeviceId(7), DeviceId(8)), &hw.inter_node);
}

// A valid profile; the bad cases below change one line of it. Line numbers
// matter: the expected errors cite them.
constexpr char kValid[] = R"(name: test
device:
  name: TestGPU
  peak_flops: {f16: 100 TFLOP/s, f32: 10 TFLOP/s}
  vector_flops: 10 TFLOP/s
  dram_bandwidth: 1 TB/s
  memory_capacity: 16 GiB
  kernel_launch_overhead: 5 us
nodes:
  devices_per_node: 4
  num_nodes: 2
intra_node: {name: nvlink, bandwidth: 100 GB/s, latency: 1 us}
inter_node: {name: ib, bandwidth: 100 Gb/s, latency: 5 us}
collectives:
  allreduce: ring
  launch_overhead: 10 us
)";

// `text` with the first occurrence of `from` replaced by `to`.
std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// kValid with the first occurrence of `from` replaced by `to`.
std::string With(const std::string& from, const std::string& to) {
  return Replaced(kValid, from, to);
}

// The rendered error of parsing `text` as "t.yaml".
std::string ErrorOf(const std::string& text) {
  StatusOr<HardwareProfile> hw = ParseHardwareProfile(text, "t.yaml");
  if (hw.ok()) return "ok";
  EXPECT_EQ(hw.status().code(), StatusCode::kInvalidArgument);
  return hw.status().ToString();
}

TEST(HardwareProfileTest, ParsesTheValidProfile) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw, ParseHardwareProfile(kValid, "t.yaml"));
  EXPECT_DOUBLE_EQ(hw.device.dram_bandwidth, 1e12);
  EXPECT_EQ(hw.device.memory_capacity, int64_t{16} << 30);
  EXPECT_DOUBLE_EQ(hw.inter_node.bandwidth, 12.5e9);
  EXPECT_EQ(hw.NumDevices(), 8);
  EXPECT_EQ(hw.source_path, "");
}

TEST(HardwareProfileTest, ReadsMatMulRegressionWithUnits) {
  ASSERT_OK_AND_ASSIGN(
      HardwareProfile hw,
      ParseHardwareProfile(With("  kernel_launch_overhead: 5 us\n",
                                "  kernel_launch_overhead: 5 us\n"
                                "  matmul_regression: {intercept: 12 us, per_flop: 1.5e-6 ns/FLOP,"
                                " per_byte: 2e-12 s/B}\n"),
                           "t.yaml"));
  ASSERT_TRUE(hw.device.matmul_regression.has_value());
  EXPECT_DOUBLE_EQ(hw.device.matmul_regression->intercept_s, 12e-6);
  EXPECT_DOUBLE_EQ(hw.device.matmul_regression->per_flop_s, 1.5e-15);
  EXPECT_DOUBLE_EQ(hw.device.matmul_regression->per_byte_s, 2e-12);
}

// What `distir calibrate` writes: a regression per dtype, each used for its own
// dtype only; a dtype key that is not a float type is an error at its line.
TEST(HardwareProfileTest, ReadsMatMulRegressionPerDtype) {
  ASSERT_OK_AND_ASSIGN(
      HardwareProfile hw,
      ParseHardwareProfile(With("  kernel_launch_overhead: 5 us\n",
                                "  kernel_launch_overhead: 5 us\n"
                                "  matmul_regression:\n"
                                "    f32: {intercept: 12 us, per_flop: 2e-14 s/FLOP, per_byte: 0 s/B}\n"
                                "    bf16: {intercept: 11 us, per_flop: 1.4e-15 s/FLOP, "
                                "per_byte: 1e-12 s/B}\n"),
                           "t.yaml"));
  EXPECT_FALSE(hw.device.matmul_regression.has_value());
  ASSERT_NE(hw.device.RegressionFor(DType::kBF16), nullptr);
  EXPECT_DOUBLE_EQ(hw.device.RegressionFor(DType::kBF16)->per_flop_s, 1.4e-15);
  EXPECT_DOUBLE_EQ(hw.device.RegressionFor(DType::kF32)->intercept_s, 12e-6);
  EXPECT_EQ(hw.device.RegressionFor(DType::kF16), nullptr);
  const std::string bad = ErrorOf(With("  kernel_launch_overhead: 5 us\n",
                                       "  kernel_launch_overhead: 5 us\n"
                                       "  matmul_regression:\n"
                                       "    i32: {intercept: 1 us, per_flop: 1 ns/FLOP, "
                                       "per_byte: 1 ns/B}\n"));
  EXPECT_THAT(bad, ::testing::HasSubstr("t.yaml:10:5: error:")) << bad;
  EXPECT_THAT(bad, ::testing::HasSubstr("i32")) << bad;
  EXPECT_THAT(bad, ::testing::HasSubstr("f16, bf16, f32, f64")) << bad;
  const std::string field = ErrorOf(With("  kernel_launch_overhead: 5 us\n",
                                         "  kernel_launch_overhead: 5 us\n"
                                         "  matmul_regression:\n"
                                         "    bf16: {intercept: 1 us, per_flop: 1 ns/FLOP}\n"));
  EXPECT_THAT(field, ::testing::HasSubstr("device.matmul_regression.bf16")) << field;
}

TEST(HardwareProfileTest, AcceptsEveryDocumentedUnit) {
  struct Case {
    const char* text;
    double bytes_per_second;
  };
  for (const Case& c :
       {Case{"8 b/s", 1}, Case{"8 kb/s", 1e3}, Case{"8 Mb/s", 1e6}, Case{"8 Gb/s", 1e9},
        Case{"8 Tb/s", 1e12}, Case{"1 B/s", 1}, Case{"1 kB/s", 1e3}, Case{"1 MB/s", 1e6},
        Case{"1 GB/s", 1e9}, Case{"1 TB/s", 1e12}, Case{"1 KiB/s", 1024}, Case{"1 MiB/s", 1048576},
        Case{"1 GiB/s", kGiB}, Case{"1 TiB/s", 1024 * kGiB}, Case{"2.5e9B/s", 2.5e9}}) {
    ASSERT_OK_AND_ASSIGN(HardwareProfile hw,
                         ParseHardwareProfile(With("1 TB/s", c.text), "t.yaml"));
    EXPECT_DOUBLE_EQ(hw.device.dram_bandwidth, c.bytes_per_second) << c.text;
  }
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw, ParseHardwareProfile(With("5 us", "2 ms"), "t.yaml"));
  EXPECT_DOUBLE_EQ(hw.device.kernel_launch_overhead, 2e-3);
  ASSERT_OK_AND_ASSIGN(hw, ParseHardwareProfile(With("5 us", "300 ns"), "t.yaml"));
  EXPECT_DOUBLE_EQ(hw.device.kernel_launch_overhead, 3e-7);
  ASSERT_OK_AND_ASSIGN(hw, ParseHardwareProfile(With("10 TFLOP/s}", "1 PFLOP/s}"), "t.yaml"));
  EXPECT_DOUBLE_EQ(hw.device.peak_flops_f32, 1e15);
  ASSERT_OK_AND_ASSIGN(hw, ParseHardwareProfile(With("num_nodes: 2", "num_nodes: any"), "t.yaml"));
  EXPECT_EQ(hw.num_nodes, 0);
}

TEST(HardwareProfileTest, SingleNodeProfileNeedsNoInterNodeLink) {
  ASSERT_OK_AND_ASSIGN(
      HardwareProfile hw,
      ParseHardwareProfile(With("num_nodes: 2\n", "num_nodes: 1\n")
                               .replace(std::string(kValid).find("inter_node"),
                                        std::string("inter_node: {name: ib, bandwidth: 100 Gb/s,"
                                                    " latency: 5 us}\n")
                                            .size(),
                                        ""),
                           "t.yaml"));
  EXPECT_EQ(hw.NumDevices(), 4);
  EXPECT_EQ(hw.inter_node.bandwidth, 0);
}

TEST(HardwareProfileTest, ReadsTheOverlapSection) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile plain, ParseHardwareProfile(kValid, "t.yaml"));
  EXPECT_FALSE(plain.overlap.comm_stream);
  ASSERT_OK_AND_ASSIGN(
      HardwareProfile hw,
      ParseHardwareProfile(
          std::string(kValid) + "overlap: {comm_stream: true, compute_slowdown: 0.19}\n",
          "t.yaml"));
  EXPECT_TRUE(hw.overlap.comm_stream);
  EXPECT_DOUBLE_EQ(hw.overlap.compute_slowdown, 0.19);
  EXPECT_EQ(hw.overlap.comm_slowdown, 0);  // optional, default 0
}

TEST(HardwareProfileTest, OverlapVariantIsDgxA100WithACommunicationStream) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile base, LoadShipped("dgx-a100.yaml"));
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw, LoadShipped("dgx-a100-overlap.yaml"));
  EXPECT_FALSE(base.overlap.comm_stream);
  EXPECT_TRUE(hw.overlap.comm_stream);
  EXPECT_DOUBLE_EQ(hw.overlap.compute_slowdown, 0.19);
  EXPECT_EQ(hw.overlap.comm_slowdown, 0);
  EXPECT_EQ(hw.name, "dgx-a100-overlap");
  EXPECT_EQ(hw.device.name, base.device.name);
  EXPECT_EQ(hw.device.peak_flops_f16, base.device.peak_flops_f16);
  EXPECT_EQ(hw.device.dram_bandwidth, base.device.dram_bandwidth);
  EXPECT_EQ(hw.device.memory_capacity, base.device.memory_capacity);
  EXPECT_EQ(hw.device.kernel_launch_overhead, base.device.kernel_launch_overhead);
  EXPECT_EQ(hw.devices_per_node, base.devices_per_node);
  EXPECT_EQ(hw.intra_node.bandwidth, base.intra_node.bandwidth);
  EXPECT_EQ(hw.intra_node.latency, base.intra_node.latency);
  EXPECT_EQ(hw.inter_node.bandwidth, base.inter_node.bandwidth);
  EXPECT_EQ(hw.inter_node.latency, base.inter_node.latency);
  EXPECT_EQ(hw.collectives.allreduce, base.collectives.allreduce);
  EXPECT_EQ(hw.collectives.launch_overhead, base.collectives.launch_overhead);
}

TEST(HardwareProfileTest, RejectsBadOverlapValuesAtTheValue) {
  const std::string v = kValid;  // 16 lines: overlap starts on line 17
  EXPECT_EQ(ErrorOf(v + "overlap:\n  comm_stream: yes\n"),
            "t.yaml:18:16: error: overlap.comm_stream must be true or false, got 'yes'");
  EXPECT_EQ(ErrorOf(v + "overlap:\n  comm_stream: true\n  compute_slowdown: -1\n"),
            "t.yaml:19:21: error: overlap.compute_slowdown must be a number from 0 to 100 "
            "(0.2 = overlapped work takes 20% longer), got '-1'");
  EXPECT_EQ(ErrorOf(v + "overlap:\n  comm_stream: true\n  comm_slowdown: 10 %\n"),
            "t.yaml:19:18: error: overlap.comm_slowdown must be a number from 0 to 100 "
            "(0.2 = overlapped work takes 20% longer), got '10 %'");
  EXPECT_EQ(ErrorOf(v + "overlap:\n  compute_slowdown: 0.1\n"),
            "t.yaml:18:3: error: overlap is missing required key 'comm_stream'");
  EXPECT_EQ(ErrorOf(v + "overlap:\n  comm_stream: true\n  streams: 2\n"),
            "t.yaml:19:3: error: unknown key 'streams' in overlap; expected one of: comm_stream, "
            "compute_slowdown, comm_slowdown");
}

TEST(HardwareProfileTest, RejectsMissingKeyAtItsMap) {
  // device's map starts at line 3, column 3 ("name: TestGPU").
  EXPECT_EQ(ErrorOf(With("  dram_bandwidth: 1 TB/s\n", "")),
            "t.yaml:3:3: error: device is missing required key 'dram_bandwidth'");
  EXPECT_EQ(ErrorOf(With("name: test\n", "")),
            "t.yaml:1:1: error: hardware profile is missing required key 'name'");
}

TEST(HardwareProfileTest, RejectsUnknownKey) {
  EXPECT_EQ(ErrorOf(With("  vector_flops:", "  vectr_flops:")),
            "t.yaml:5:3: error: unknown key 'vectr_flops' in device; expected one of: name, "
            "peak_flops, vector_flops, dram_bandwidth, memory_capacity, kernel_launch_overhead, "
            "matmul_regression, gemm, attention");
  EXPECT_EQ(ErrorOf(With("f32: 10", "f8: 10")),
            "t.yaml:4:34: error: unknown key 'f8' in device.peak_flops; expected one of: f16, "
            "bf16, f32, f64");
}

TEST(HardwareProfileTest, RejectsUnknownUnit) {
  EXPECT_EQ(ErrorOf(With("1 TB/s", "1 TBps")),
            "t.yaml:6:19: error: unknown unit 'TBps' in device.dram_bandwidth '1 TBps'; it must "
            "be a bandwidth (B/s, kB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, b/s, kb/s, "
            "Mb/s, Gb/s, Tb/s)");
  // A size where a bandwidth belongs is a wrong unit, not a silent conversion.
  EXPECT_EQ(ErrorOf(With("latency: 5 us", "latency: 5 GB")),
            "t.yaml:13:54: error: unknown unit 'GB' in inter_node.latency '5 GB'; it must be a "
            "duration (s, ms, us, ns)");
}

TEST(HardwareProfileTest, RejectsMissingUnit) {
  EXPECT_EQ(ErrorOf(With("16 GiB", "17179869184")),
            "t.yaml:7:20: error: device.memory_capacity has no unit in '17179869184'; it must be "
            "a size (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)");
}

TEST(HardwareProfileTest, RejectsNegativeAndZeroBandwidth) {
  EXPECT_EQ(ErrorOf(With("100 GB/s", "-100 GB/s")),
            "t.yaml:12:39: error: intra_node.bandwidth must be positive, got '-100 GB/s'");
  EXPECT_EQ(ErrorOf(With("100 Gb/s", "0 Gb/s")),
            "t.yaml:13:35: error: inter_node.bandwidth must be positive, got '0 Gb/s'");
  EXPECT_EQ(ErrorOf(With("launch_overhead: 10 us", "launch_overhead: -1 us")),
            "t.yaml:16:20: error: collectives.launch_overhead must not be negative, got '-1 us'");
}

TEST(HardwareProfileTest, RejectsWrongTypes) {
  EXPECT_EQ(ErrorOf(With("{f16: 100 TFLOP/s, f32: 10 TFLOP/s}", "100 TFLOP/s")),
            "t.yaml:4:15: error: device.peak_flops must be a map of keys, got '100 TFLOP/s'");
  EXPECT_EQ(ErrorOf(With("10 TFLOP/s\n", "[10 TFLOP/s]\n")),
            "t.yaml:5:17: error: device.vector_flops must be a FLOP rate (FLOP/s, MFLOP/s, "
            "GFLOP/s, TFLOP/s, PFLOP/s), got a list");
  EXPECT_EQ(ErrorOf(With("name: TestGPU", "name: {a: 1}")),
            "t.yaml:3:9: error: device.name must be a non-empty string, got a map");
  EXPECT_EQ(ErrorOf(With("num_nodes: 2", "num_nodes: two")),
            "t.yaml:11:14: error: nodes.num_nodes must be an integer >= 0 or 'any', got 'two'");
  EXPECT_EQ(ErrorOf(With("devices_per_node: 4", "devices_per_node: 0")),
            "t.yaml:10:21: error: nodes.devices_per_node must be an integer >= 1, got '0'");
  EXPECT_EQ(ErrorOf(With("1 TB/s", "lots GB/s")),
            "t.yaml:6:19: error: device.dram_bandwidth must be a number with a unit, got "
            "'lots GB/s'");
  EXPECT_EQ(ErrorOf("- 1\n- 2\n"),
            "t.yaml:1:1: error: hardware profile must be a map of keys, got a list");
}

TEST(HardwareProfileTest, RejectsUnknownAllReduceAlgorithm) {
  EXPECT_EQ(ErrorOf(With("allreduce: ring", "allreduce: butterfly")),
            "t.yaml:15:14: error: unknown algorithm 'butterfly' in collectives.allreduce; "
            "expected one of: ring, tree, hierarchical");
}

TEST(HardwareProfileTest, RejectsDuplicateKey) {
  // The second occurrence (line 7) is the one reported.
  EXPECT_EQ(ErrorOf(With("  vector_flops:", "  dram_bandwidth: 2 TB/s\n  vector_flops:")),
            "t.yaml:7:3: error: duplicate key 'dram_bandwidth' in device");
}

TEST(HardwareProfileTest, MultiNodeProfileNeedsInterNodeLink) {
  EXPECT_EQ(ErrorOf(With("inter_node: {name: ib, bandwidth: 100 Gb/s, latency: 5 us}\n", "")),
            "t.yaml:1:1: error: hardware profile is missing required key 'inter_node' (needed "
            "because nodes.num_nodes is not 1)");
}

TEST(HardwareProfileTest, TurnsYamlSyntaxErrorsIntoStatus) {
  // An unclosed flow map: yaml-cpp's ParserException, with its 0-based mark made 1-based.
  StatusOr<HardwareProfile> hw =
      ParseHardwareProfile(With("latency: 1 us}", "latency: 1 us"), "t.yaml");
  EXPECT_THAT(hw, StatusIs(StatusCode::kInvalidArgument, "invalid YAML: "));
  EXPECT_EQ(hw.status().loc().file, "t.yaml");
  EXPECT_GE(hw.status().loc().line, 12);
  EXPECT_EQ(ErrorOf("name: [a\n"),
            "t.yaml:2:1: error: invalid YAML: end of sequence flow not found");
  EXPECT_EQ(ErrorOf(""), "t.yaml:1:1: error: hardware profile is empty");
}

TEST(HardwareProfileTest, MissingFileIsNotFound) {
  StatusOr<HardwareProfile> hw = LoadHardwareProfile(SourcePath("configs/hardware/nope.yaml"));
  EXPECT_THAT(hw, StatusIs(StatusCode::kNotFound, "cannot open hardware profile"));
}

// Issue 20: a profile path that is a device is refused before reading (std::ifstream
// read /dev/zero until memory ran out).
TEST(HardwareProfileTest, RefusesAPathThatIsNotARegularFile) {
  StatusOr<HardwareProfile> hw = LoadHardwareProfile("/dev/zero");
  EXPECT_THAT(hw, StatusIs(StatusCode::kInvalidArgument,
                           "cannot open hardware profile: '/dev/zero' is a character device, "
                           "not a regular file"));
  EXPECT_EQ(hw.status().loc().file, "/dev/zero");
}

// Issue 20: values whose unit scaling leaves [1e-30, 1e30] in their base unit
// are errors at their key: the cost model's times would not be finite.
TEST(HardwareProfileTest, RejectsValuesOutOfTheCostModelsRange) {
  // Finite, but two of them add up to infinity.
  EXPECT_EQ(ErrorOf(With("kernel_launch_overhead: 5 us", "kernel_launch_overhead: 1e308 s")),
            "t.yaml:8:27: error: device.kernel_launch_overhead '1e308 s' is out of range: its "
            "magnitude must be between 1e-30 and 1e+30 s");
  // Subnormal: bytes / bandwidth is infinite.
  EXPECT_EQ(ErrorOf(With("1 TB/s", "1e-320 GB/s")),
            "t.yaml:6:19: error: device.dram_bandwidth '1e-320 GB/s' is out of range: its "
            "magnitude must be between 1e-30 and 1e+30 B/s");
  // Infinite once scaled; it tripped a check in the collective rules.
  EXPECT_EQ(ErrorOf(With("100 GB/s", "1e308 GB/s")),
            "t.yaml:12:39: error: intra_node.bandwidth '1e308 GB/s' is out of range: its "
            "magnitude must be between 1e-30 and 1e+30 B/s");
  EXPECT_EQ(ErrorOf(With("10 TFLOP/s\n", "1e400 FLOP/s\n")),
            "t.yaml:5:17: error: device.vector_flops '1e400 FLOP/s' is out of range: its "
            "magnitude must be between 1e-30 and 1e+30 FLOP/s");
  EXPECT_EQ(ErrorOf(With("  kernel_launch_overhead: 5 us\n",
                         "  kernel_launch_overhead: 5 us\n"
                         "  matmul_regression: {intercept: -1e31 s, per_flop: 1 ns/FLOP, "
                         "per_byte: 1 ns/B}\n")),
            "t.yaml:9:34: error: device.matmul_regression.intercept '-1e31 s' is out of range: "
            "its magnitude must be between 1e-30 and 1e+30 s");
  // A capacity that rounds to 0 bytes would mean "no limit" in experiments.
  EXPECT_EQ(ErrorOf(With("16 GiB", "0.25 B")),
            "t.yaml:7:20: error: device.memory_capacity must be at least 1 B, got '0.25 B'");
  // Zero where zero is allowed, and the ends of the range, are fine.
  EXPECT_EQ(ErrorOf(With("latency: 1 us", "latency: 0 s")), "ok");
  EXPECT_EQ(ErrorOf(With("1 TB/s", "1e-30 B/s")), "ok");
  EXPECT_EQ(ErrorOf(With("kernel_launch_overhead: 5 us", "kernel_launch_overhead: 1e30 s")), "ok");
}

}  // namespace
}  // namespace distir::sim

namespace distir::sim {
namespace {

// kValid with a device.gemm section after kernel_launch_overhead (line 8), so
// that the section's keys are lines 10-14.
std::string WithGemm(const std::string& from = "", const std::string& to = "") {
  std::string gemm =
      "  gemm:\n"
      "    model: tiled\n"
      "    sm_count: 108\n"
      "    tile: [256, 128]\n"
      "    max_efficiency: 0.8\n"
      "    tile_overhead: 2 us\n";
  if (!from.empty()) gemm = Replaced(gemm, from, to);
  return With("  kernel_launch_overhead: 5 us\n", "  kernel_launch_overhead: 5 us\n" + gemm);
}

TEST(HardwareProfileTest, ReadsTheTiledGemmModel) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw, ParseHardwareProfile(WithGemm(), "t.yaml"));
  ASSERT_TRUE(hw.device.gemm.has_value());
  EXPECT_EQ(hw.device.gemm->sm_count, 108);
  EXPECT_EQ(hw.device.gemm->ctas_per_sm, 1);
  EXPECT_EQ(hw.device.gemm->tile_m, 256);
  EXPECT_EQ(hw.device.gemm->tile_n, 128);
  EXPECT_DOUBLE_EQ(hw.device.gemm->max_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(hw.device.gemm->tile_overhead_s, 2e-6);
  // Without the section there is no tiled model (every shipped profile).
  ASSERT_OK_AND_ASSIGN(HardwareProfile plain, ParseHardwareProfile(kValid, "t.yaml"));
  EXPECT_FALSE(plain.device.gemm.has_value());
}

TEST(HardwareProfileTest, TiledGemmDefaultsTileAndOverheadAndCtas) {
  ASSERT_OK_AND_ASSIGN(
      HardwareProfile hw,
      ParseHardwareProfile(With("  kernel_launch_overhead: 5 us\n",
                                "  kernel_launch_overhead: 5 us\n"
                                "  gemm: {model: tiled, sm_count: 132, max_efficiency: 0.7}\n"),
                           "t.yaml"));
  ASSERT_TRUE(hw.device.gemm.has_value());
  EXPECT_EQ(hw.device.gemm->sm_count, 132);
  EXPECT_EQ(hw.device.gemm->ctas_per_sm, 1);
  EXPECT_EQ(hw.device.gemm->tile_m, 128);
  EXPECT_EQ(hw.device.gemm->tile_n, 128);
  EXPECT_EQ(hw.device.gemm->tile_overhead_s, 0);
}

TEST(HardwareProfileTest, RejectsBadTiledGemmValuesAtTheValue) {
  EXPECT_EQ(ErrorOf(WithGemm("model: tiled", "model: roofline")),
            "t.yaml:10:12: error: unknown model 'roofline' in device.gemm.model; expected one "
            "of: tiled");
  EXPECT_EQ(ErrorOf(WithGemm("sm_count: 108", "sm_count: 0")),
            "t.yaml:11:15: error: device.gemm.sm_count must be an integer >= 1, got '0'");
  EXPECT_EQ(ErrorOf(WithGemm("[256, 128]", "[256, 0]")),
            "t.yaml:12:17: error: device.gemm.tile must be a list of two integers [tile_m, "
            "tile_n], each from 1 to 1048576, got '0'");
  EXPECT_EQ(ErrorOf(WithGemm("[256, 128]", "[256]")),
            "t.yaml:12:11: error: device.gemm.tile must be a list of two integers [tile_m, "
            "tile_n], each from 1 to 1048576, got a list of 1");
  EXPECT_EQ(ErrorOf(WithGemm("[256, 128]", "256")),
            "t.yaml:12:11: error: device.gemm.tile must be a list of two integers [tile_m, "
            "tile_n], each from 1 to 1048576, got '256'");
  EXPECT_EQ(ErrorOf(WithGemm("0.8", "1.5")),
            "t.yaml:13:21: error: device.gemm.max_efficiency must be a number in (0, 1] (a "
            "fraction of the peak), got '1.5'");
  EXPECT_EQ(ErrorOf(WithGemm("0.8", "80 %")),
            "t.yaml:13:21: error: device.gemm.max_efficiency must be a number in (0, 1] (a "
            "fraction of the peak), got '80 %'");
  EXPECT_EQ(ErrorOf(WithGemm("2 us", "-2 us")),
            "t.yaml:14:20: error: device.gemm.tile_overhead must not be negative, got '-2 us'");
}

TEST(HardwareProfileTest, RejectsMissingAndUnknownTiledGemmKeys) {
  EXPECT_EQ(ErrorOf(WithGemm("    max_efficiency: 0.8\n", "")),
            "t.yaml:10:5: error: device.gemm is missing required key 'max_efficiency'");
  EXPECT_EQ(ErrorOf(WithGemm("    sm_count: 108\n", "    sms: 108\n")),
            "t.yaml:11:5: error: unknown key 'sms' in device.gemm; expected one of: model, "
            "sm_count, ctas_per_sm, tile, max_efficiency, tile_overhead, split_k_min");
  EXPECT_EQ(ErrorOf(WithGemm("    sm_count: 108\n", "    sm_count: 108\n    split_k_min: -1\n")),
            "t.yaml:12:18: error: device.gemm.split_k_min must be an integer >= 0, got '-1'");
}

// WithGemm() plus a device.attention section after it: its keys are lines 16-20.
std::string WithAttention(const std::string& from = "", const std::string& to = "") {
  std::string attention =
      "  attention:\n"
      "    model: tiled\n"
      "    block: 128\n"
      "    block_overhead: 3.75\n"
      "    max_efficiency: 0.812\n"
      "    backward_max_efficiency: 0.582\n";
  if (!from.empty()) attention = Replaced(attention, from, to);
  return WithGemm("    tile_overhead: 2 us\n", "    tile_overhead: 2 us\n" + attention);
}

TEST(HardwareProfileTest, ReadsTheTiledAttentionModel) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw, ParseHardwareProfile(WithAttention(), "t.yaml"));
  ASSERT_TRUE(hw.device.attention.has_value());
  EXPECT_EQ(hw.device.attention->block, 128);
  EXPECT_DOUBLE_EQ(hw.device.attention->block_overhead, 3.75);
  EXPECT_DOUBLE_EQ(hw.device.attention->max_efficiency, 0.812);
  EXPECT_DOUBLE_EQ(hw.device.attention->backward_max_efficiency, 0.582);
  ASSERT_OK_AND_ASSIGN(HardwareProfile plain, ParseHardwareProfile(WithGemm(), "t.yaml"));
  EXPECT_FALSE(plain.device.attention.has_value());
}

TEST(HardwareProfileTest, RejectsBadTiledAttentionValuesAtTheValue) {
  EXPECT_EQ(ErrorOf(WithAttention("block: 128", "block: 0")),
            "t.yaml:17:12: error: device.attention.block must be an integer >= 1, got '0'");
  EXPECT_EQ(ErrorOf(WithAttention("3.75", "-1")),
            "t.yaml:18:21: error: device.attention.block_overhead must be a number of steps "
            "from 0 to 1000000 (no unit), got '-1'");
  EXPECT_EQ(ErrorOf(WithAttention("0.582", "0")),
            "t.yaml:20:30: error: device.attention.backward_max_efficiency must be a number in "
            "(0, 1] (a fraction of the peak), got '0'");
  EXPECT_EQ(ErrorOf(WithAttention("    max_efficiency: 0.812\n", "")),
            "t.yaml:16:5: error: device.attention is missing required key 'max_efficiency'");
  // The model schedules blocks on device.gemm's SMs: no gemm, no attention model.
  EXPECT_EQ(ErrorOf(With("  kernel_launch_overhead: 5 us\n",
                         "  kernel_launch_overhead: 5 us\n"
                         "  attention: {model: tiled, max_efficiency: 0.8, "
                         "backward_max_efficiency: 0.6}\n")),
            "t.yaml:9:14: error: device.attention needs a device.gemm section (the tiled models "
            "share its sm_count)");
}

// calibrated_on (issue 19 item 10): where `distir calibrate` measured. Optional;
// host and cpu_model may be empty (unknown), cpus an integer >= 0.
TEST(HardwareProfileTest, ReadsWhereTheProfileWasCalibrated) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile plain, ParseHardwareProfile(kValid, "t.yaml"));
  EXPECT_FALSE(plain.calibrated_on.has_value());
  ASSERT_OK_AND_ASSIGN(
      HardwareProfile hw,
      ParseHardwareProfile(
          std::string(kValid) +
              "calibrated_on: {host: \"vm-1\", cpu_model: \"AMD EPYC\", cpus: 2}\n",
          "t.yaml"));
  ASSERT_TRUE(hw.calibrated_on.has_value());
  EXPECT_EQ(*hw.calibrated_on, (HostInfo{"vm-1", "AMD EPYC", 2}));
  ASSERT_OK_AND_ASSIGN(
      HardwareProfile unknown,
      ParseHardwareProfile(
          std::string(kValid) + "calibrated_on: {host: \"\", cpu_model: ~, cpus: 0}\n", "t.yaml"));
  EXPECT_EQ(*unknown.calibrated_on, HostInfo{});
}

TEST(HardwareProfileTest, RejectsBadCalibratedOn) {
  EXPECT_EQ(ErrorOf(std::string(kValid) + "calibrated_on: {host: a, cpu_model: b, cpus: -1}\n"),
            "t.yaml:17:46: error: calibrated_on.cpus must be an integer >= 0, got '-1'");
  EXPECT_EQ(ErrorOf(std::string(kValid) + "calibrated_on: {host: [a], cpu_model: b, cpus: 1}\n"),
            "t.yaml:17:23: error: calibrated_on.host must be a string, got a list");
  EXPECT_EQ(ErrorOf(std::string(kValid) + "calibrated_on: {host: a, cpu: b, cpus: 1}\n"),
            "t.yaml:17:26: error: unknown key 'cpu' in calibrated_on; expected one of: host, "
            "cpu_model, cpus");
}

}  // namespace
}  // namespace distir::sim
