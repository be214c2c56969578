// Closed-form checks of every collective cost rule (docs/cost_model.md,
// "Collectives"). Each expected time is worked out by hand in the comment above
// it; S = 1 GiB = 2^30 B unless stated otherwise.

#include "sim/collective_cost_rules.h"

#include <vector>

#include "testing/test_util.h"

namespace distir::sim {
namespace {

using ::distir::testing::SourcePath;

constexpr int64_t kGiB = int64_t{1} << 30;

// 8 devices per node, any number of nodes. NVLink-like intra-node link
// (B_intra = 150 GB/s, alpha_intra = 2 us), network between nodes
// (B_inter = 25 GB/s, alpha_inter = 10 us), launch overhead L = 5 us.
HardwareProfile TestCluster(AllReduceAlgorithm algorithm) {
  HardwareProfile hw;
  hw.name = "test-cluster";
  hw.devices_per_node = 8;
  hw.num_nodes = 0;
  hw.intra_node = LinkSpec{"nvlink", 150e9, 2e-6};
  hw.inter_node = LinkSpec{"ib", 25e9, 10e-6};
  hw.collectives = CollectiveSpec{algorithm, 5e-6};
  return hw;
}

// d`first` .. d`first + count - 1`.
std::vector<DeviceId> Devices(int first, int count) {
  std::vector<DeviceId> out;
  for (int i = first; i < first + count; ++i) out.push_back(DeviceId(i));
  return out;
}

double Time(const HardwareProfile& hw, CollectiveKind kind, const std::vector<DeviceId>& devices,
            int64_t bytes) {
  return CollectiveTime(hw, kind, devices, bytes);
}

// Relative tolerance: the formulas are exact up to floating-point rounding.
#define EXPECT_SECONDS(actual, expected) EXPECT_NEAR((actual), (expected), 1e-12 * (expected))

const HardwareProfile kRing = TestCluster(AllReduceAlgorithm::kRing);
const HardwareProfile kTree = TestCluster(AllReduceAlgorithm::kTree);
const HardwareProfile kHier = TestCluster(AllReduceAlgorithm::kHierarchical);

TEST(CollectiveCostRulesTest, RingAllReduceInsideOneNode) {
  // 2(n-1)/n * S/B + 2(n-1) alpha + L = 2*7/8 * 2^30/150e9 + 14*2e-6 + 5e-6
  //   = 0.01252698794667 + 0.000028 + 0.000005 = 0.01255998794667 s
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kAllReduce, Devices(0, 8), kGiB),
                 0.012559987946666667);
  // Inside one node the hierarchical setting changes nothing.
  EXPECT_SECONDS(Time(kHier, CollectiveKind::kAllReduce, Devices(0, 8), kGiB),
                 0.012559987946666667);
}

TEST(CollectiveCostRulesTest, AllGatherAndReduceScatterInsideOneNode) {
  // (n-1)/n * S/B + (n-1) alpha + L = 7/8 * 2^30/150e9 + 7*2e-6 + 5e-6
  //   = 0.00626349397333 + 0.000014 + 0.000005 = 0.00628249397333 s
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kAllGather, Devices(0, 8), kGiB),
                 0.006282493973333333);
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kReduceScatter, Devices(0, 8), kGiB),
                 0.006282493973333333);
}

TEST(CollectiveCostRulesTest, BroadcastAndReduceArePipelined) {
  // S/B + alpha + L = 2^30/150e9 + 2e-6 + 5e-6 = 0.00715827882667 + 0.000007
  //   = 0.00716527882667 s, whatever n is.
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kBroadcast, Devices(0, 8), kGiB),
                 0.007165278826666666);
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kReduce, Devices(0, 8), kGiB), 0.007165278826666666);
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kBroadcast, Devices(0, 3), kGiB),
                 0.007165278826666666);
}

TEST(CollectiveCostRulesTest, SendUsesTheLinkBetweenItsDevices) {
  // Same node: S/B_intra + alpha_intra + L = 0.00715827882667 + 7e-6 s.
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kSend, {DeviceId(0), DeviceId(1)}, kGiB),
                 0.007165278826666666);
  // d7 -> d8 crosses nodes: S/B_inter + alpha_inter + L
  //   = 2^30/25e9 + 10e-6 + 5e-6 = 0.04294967296 + 0.000015 = 0.04296467296 s
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kSend, {DeviceId(7), DeviceId(8)}, kGiB),
                 0.04296467296);
}

TEST(CollectiveCostRulesTest, ScatterAndGatherMoveAllButTheRootsShare) {
  // (n-1)/n * S/B + (n-1) alpha + L, n = 4: 3/4 * 2^30/150e9 + 3*2e-6 + 5e-6
  //   = 0.00536870912 + 0.000011 = 0.00537970912 s
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kScatter, Devices(0, 4), kGiB), 0.00537970912);
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kGather, Devices(0, 4), kGiB), 0.00537970912);
}

TEST(CollectiveCostRulesTest, AllToAllSendsAllButOwnShare) {
  // S = 64 MiB per device, n = 8: 7/8 * 2^26/150e9 + 7*2e-6 + 5e-6
  //   = 0.000391468373333 + 0.000019 = 0.000410468373333 s
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kAllToAll, Devices(0, 8), int64_t{1} << 26),
                 0.00041046837333333336);
  // Across two nodes the network is the bottleneck, n = 16:
  // 15/16 * 2^26/25e9 + 15*10e-6 + 5e-6 = 0.0025165824 + 0.000155 = 0.0026715824 s
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kAllToAll, Devices(0, 16), int64_t{1} << 26),
                 0.0026715823999999997);
}

TEST(CollectiveCostRulesTest, TreeAllReduce) {
  // 2 S/B + 2 ceil(log2 n) alpha + L, n = 8: 2 * 2^30/150e9 + 2*3*2e-6 + 5e-6
  //   = 0.01431655765333 + 0.000017 = 0.01433355765333 s
  EXPECT_SECONDS(Time(kTree, CollectiveKind::kAllReduce, Devices(0, 8), kGiB),
                 0.014333557653333332);
  // n = 6 has the same depth, ceil(log2 6) = 3.
  EXPECT_SECONDS(Time(kTree, CollectiveKind::kAllReduce, Devices(0, 6), kGiB),
                 0.014333557653333332);
  // The tree setting only concerns all-reduce.
  EXPECT_SECONDS(Time(kTree, CollectiveKind::kAllGather, Devices(0, 8), kGiB),
                 0.006282493973333333);
}

TEST(CollectiveCostRulesTest, FlatRingAcrossNodesIsBoundByTheNetwork) {
  // d0..d15 in two nodes, ring: B = min(150e9, 25e9), alpha = max(2, 10) us.
  // 2*15/16 * 2^30/25e9 + 30*10e-6 + 5e-6 = 0.0805306368 + 0.000305 = 0.0808356368 s
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kAllReduce, Devices(0, 16), kGiB), 0.0808356368);
}

TEST(CollectiveCostRulesTest, HierarchicalAllReduceAcrossNodes) {
  // g = 8 per node, m = 2 nodes:
  // 2 [ (g-1)/g S/B_intra + (g-1) alpha_intra + (m-1)/m (S/g)/B_inter + (m-1) alpha_inter ] + L
  //   = 2 [ 0.00626349397333 + 14e-6 + 0.00268435456 + 10e-6 ] + 5e-6
  //   = 2 * 0.00897184853333 + 5e-6 = 0.01794869706667 s
  EXPECT_SECONDS(Time(kHier, CollectiveKind::kAllReduce, Devices(0, 16), kGiB),
                 0.01794869706666667);
  // Much faster than the flat ring over the network (0.0808 s).
  EXPECT_LT(Time(kHier, CollectiveKind::kAllReduce, Devices(0, 16), kGiB),
            Time(kRing, CollectiveKind::kAllReduce, Devices(0, 16), kGiB));
}

TEST(CollectiveCostRulesTest, HierarchicalAllGatherAndReduceScatterAcrossNodes) {
  // One intra and one inter phase: 0.00626349397333 + 14e-6 + 0.00268435456 + 10e-6 + 5e-6
  //   = 0.00897684853333 s
  EXPECT_SECONDS(Time(kHier, CollectiveKind::kAllGather, Devices(0, 16), kGiB),
                 0.008976848533333333);
  EXPECT_SECONDS(Time(kHier, CollectiveKind::kReduceScatter, Devices(0, 16), kGiB),
                 0.008976848533333333);
}

TEST(CollectiveCostRulesTest, HierarchyWithOneDevicePerNodeIsAFlatRing) {
  // d0, d8, d16, d24: g = 1, m = 4; the intra phases vanish:
  // 2*3/4 * 2^30/25e9 + 2*3*10e-6 + 5e-6 = 0.06442450944 + 0.000065 = 0.06448950944 s
  const std::vector<DeviceId> one_per_node = {DeviceId(0), DeviceId(8), DeviceId(16), DeviceId(24)};
  EXPECT_SECONDS(Time(kHier, CollectiveKind::kAllReduce, one_per_node, kGiB), 0.06448950944);
  EXPECT_SECONDS(Time(kRing, CollectiveKind::kAllReduce, one_per_node, kGiB), 0.06448950944);
}

TEST(CollectiveCostRulesTest, HierarchyWithUnevenNodes) {
  // d0, d1, d2 in node 0 and d8 in node 1: the fullest node (g_max = 3) sets the
  // intra phases, the emptiest (g_min = 1) the shard crossing the network (S/1):
  // 2 [ 2/3 S/B_intra + 2 alpha_intra + 1/2 S/B_inter + alpha_inter ] + L
  //   = 2 [ 0.00477218588444 + 4e-6 + 0.02147483648 + 10e-6 ] + 5e-6 = 0.05252704472889 s
  const std::vector<DeviceId> uneven = {DeviceId(0), DeviceId(1), DeviceId(2), DeviceId(8)};
  EXPECT_SECONDS(Time(kHier, CollectiveKind::kAllReduce, uneven, kGiB), 0.05252704472888888);
}

TEST(CollectiveCostRulesTest, ParticipantOrderDoesNotMatter) {
  const std::vector<DeviceId> interleaved = {DeviceId(0), DeviceId(8), DeviceId(1), DeviceId(9)};
  const std::vector<DeviceId> grouped = {DeviceId(0), DeviceId(1), DeviceId(8), DeviceId(9)};
  for (const HardwareProfile* hw : {&kRing, &kTree, &kHier}) {
    EXPECT_EQ(Time(*hw, CollectiveKind::kAllReduce, interleaved, kGiB),
              Time(*hw, CollectiveKind::kAllReduce, grouped, kGiB));
  }
}

TEST(CollectiveCostRulesTest, LoneParticipantAndEmptyBufferCostNothing) {
  for (CollectiveKind kind :
       {CollectiveKind::kSend, CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
        CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll, CollectiveKind::kBroadcast,
        CollectiveKind::kScatter, CollectiveKind::kGather, CollectiveKind::kReduce}) {
    EXPECT_EQ(Time(kRing, kind, {DeviceId(3)}, kGiB), 0) << CollectiveKindName(kind);
    EXPECT_EQ(Time(kRing, kind, {DeviceId(3), DeviceId(4)}, 0), 0) << CollectiveKindName(kind);
  }
}

TEST(CollectiveCostRulesTest, MatchesTheBriefsDgx2Example) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw,
                       LoadHardwareProfile(SourcePath("configs/hardware/dgx2-v100.yaml")));
  // 1 GiB over 8 V100s on NVSwitch (150 GB/s, alpha = 3.4 us, L = 8.4 us):
  // 2*7/8 * 2^30/150e9 = 0.01252698794667 s (12.53 ms), + 14*3.4e-6 + 8.4e-6 = 56 us:
  // 0.01258298794667 s
  EXPECT_SECONDS(Time(hw, CollectiveKind::kAllReduce, Devices(8, 8), kGiB), 0.012582987946666667);
}

TEST(CollectiveCostRulesTest, PythonCompatReproducesTheOriginalsAllReduce) {
  ASSERT_OK_AND_ASSIGN(
      HardwareProfile hw,
      LoadHardwareProfile(SourcePath("configs/hardware/distir-python-compat.yaml")));
  // DISTIR_PYTHON_NOTES.md §2: a 1024x1024 f32 all-reduce (4 MiB) at 25 Gbps costs
  // 2*(n-1)/n * 4194304 / 3.125e9 s: 0.00134217728 (n=2), 0.00201326592 (n=4),
  // 0.00234881024 (n=8). No latency, no launch overhead: the same numbers.
  const int64_t bytes = int64_t{1024} * 1024 * 4;
  EXPECT_SECONDS(Time(hw, CollectiveKind::kAllReduce, Devices(1, 2), bytes), 0.00134217728);
  EXPECT_SECONDS(Time(hw, CollectiveKind::kAllReduce, Devices(1, 4), bytes), 0.00201326592);
  EXPECT_SECONDS(Time(hw, CollectiveKind::kAllReduce, Devices(1, 8), bytes), 0.00234881024);
}

TEST(CollectiveCostRulesTest, NamesEveryKind) {
  EXPECT_EQ(CollectiveKindName(CollectiveKind::kAllReduce), "AllReduce");
  EXPECT_EQ(CollectiveKindName(CollectiveKind::kReduceScatter), "ReduceScatter");
  EXPECT_EQ(CollectiveKindName(CollectiveKind::kGather), "Gather");
}

TEST(CollectiveCostRulesDeathTest, RejectsDevicesOutsideTheProfile) {
  ASSERT_OK_AND_ASSIGN(HardwareProfile hw,
                       LoadHardwareProfile(SourcePath("configs/hardware/dgx2-v100.yaml")));
  EXPECT_DEATH(Time(hw, CollectiveKind::kAllReduce, {DeviceId(0), DeviceId(16)}, kGiB),
               "not a device of profile 'dgx2-v100'");
  EXPECT_DEATH(Time(hw, CollectiveKind::kSend, Devices(0, 3), kGiB), "Send has 3 participants");
}

}  // namespace
}  // namespace distir::sim
