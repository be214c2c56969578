// The CUDA kernels, cuBLAS GEMM and NCCL against the CPU host kernels
// (backend/cpu/host_kernels.h), in f32, f16 and bf16 (STYLE.md §7: the GPU
// backend is tested against the CPU). Every test GTEST_SKIPs without a GPU but
// the loading of cuBLAS, which needs none.

#include "backend/gpu/gpu_kernels.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "backend/cpu/host_kernels.h"
#include "backend/gpu/cublas_gemm.h"
#include "backend/gpu/cublas_library.h"
#include "backend/gpu/device_buffer.h"
#include "backend/gpu/nccl_comm.h"
#include "testing/test_util.h"

namespace distir::gpu {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (DeviceCount() == 0) GTEST_SKIP() << "no CUDA device"

const GpuDType kAll[] = {GpuDType::kF32, GpuDType::kF16, GpuDType::kBF16};

// Relative tolerance per dtype: storage rounding of f16 (2^-11) and bf16 (2^-8),
// compounded over a few operations.
double Tol(GpuDType t) { return t == GpuDType::kF32 ? 1e-5 : t == GpuDType::kF16 ? 4e-3 : 3e-2; }

std::vector<float> Random(size_t n, uint32_t seed, float lo = -2, float hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Rounds to the storage dtype and back, so the host reference sees the GPU's inputs.
std::vector<float> Rounded(GpuDType t, std::vector<float> v) {
  std::vector<uint16_t> bits(v.size());
  if (t == GpuDType::kF16) {
    backend::FloatToHalf(static_cast<int64_t>(v.size()), v.data(), bits.data());
    backend::HalfToFloat(static_cast<int64_t>(v.size()), bits.data(), v.data());
  } else if (t == GpuDType::kBF16) {
    backend::FloatToBFloat16(static_cast<int64_t>(v.size()), v.data(), bits.data());
    backend::BFloat16ToFloat(static_cast<int64_t>(v.size()), bits.data(), v.data());
  }
  return v;
}

DeviceBuffer Upload(GpuDType t, const std::vector<float>& v) {
  StatusOr<DeviceBuffer> b = DeviceBuffer::Allocate(v.size() * ByteWidth(t));
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  std::vector<uint16_t> bits(v.size());
  if (t == GpuDType::kF32) {
    EXPECT_OK(b->CopyFromHost(v.data(), v.size() * 4));
    return std::move(*b);
  }
  if (t == GpuDType::kF16)
    backend::FloatToHalf(static_cast<int64_t>(v.size()), v.data(), bits.data());
  if (t == GpuDType::kBF16) {
    backend::FloatToBFloat16(static_cast<int64_t>(v.size()), v.data(), bits.data());
  }
  EXPECT_OK(b->CopyFromHost(bits.data(), v.size() * 2));
  return std::move(*b);
}

std::vector<float> Download(GpuDType t, const DeviceBuffer& b, size_t n) {
  EXPECT_OK(SynchronizeDevice());
  std::vector<float> v(n);
  if (t == GpuDType::kF32) {
    EXPECT_OK(b.CopyToHost(v.data(), n * 4));
    return v;
  }
  std::vector<uint16_t> bits(n);
  EXPECT_OK(b.CopyToHost(bits.data(), n * 2));
  if (t == GpuDType::kF16) backend::HalfToFloat(static_cast<int64_t>(n), bits.data(), v.data());
  if (t == GpuDType::kBF16)
    backend::BFloat16ToFloat(static_cast<int64_t>(n), bits.data(), v.data());
  return v;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, double tol,
                 const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << what << " element " << i;
  }
}

// cuBLAS is loaded on first use (cublas_library.h): the library the headers
// name, every function the GEMMs call, the same table on every call.
TEST(CublasLibraryTest, LoadsEveryFunctionWithoutADevice) {
  ASSERT_OK_AND_ASSIGN(const CublasLibrary* cublas, LoadCublas());
  EXPECT_NE(cublas->create, nullptr);
  EXPECT_NE(cublas->destroy, nullptr);
  EXPECT_NE(cublas->set_stream, nullptr);
  EXPECT_NE(cublas->gemm_ex, nullptr);
  EXPECT_NE(cublas->gemm_strided_batched_ex, nullptr);
  ASSERT_OK_AND_ASSIGN(const CublasLibrary* again, LoadCublas());
  EXPECT_EQ(again, cublas);
}

TEST(GpuKernelsTest, ElementwiseMatchesHost) {
  SKIP_WITHOUT_GPU();
  const size_t n = 1000;
  for (GpuDType t : kAll) {
    std::vector<float> a = Rounded(t, Random(n, 1)), b = Rounded(t, Random(n, 2, 0.5f, 2));
    DeviceBuffer da = Upload(t, a), db = Upload(t, b), out = Upload(t, a);
    std::vector<float> want(n);
    ASSERT_OK(LaunchBinary(GpuBinary::kMul, t, n, da.data(), db.data(), out.data()));
    backend::Binary<float>(backend::BinaryKind::kMul, n, a.data(), b.data(), want.data());
    ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), GpuDTypeName(t));
    ASSERT_OK(LaunchBinary(GpuBinary::kDiv, t, n, da.data(), db.data(), out.data()));
    backend::Binary<float>(backend::BinaryKind::kDiv, n, a.data(), b.data(), want.data());
    ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), GpuDTypeName(t));
    ASSERT_OK(LaunchUnary(GpuUnary::kGelu, t, n, da.data(), out.data()));
    backend::Unary<float>(backend::UnaryKind::kGeluErf, n, a.data(), want.data());
    ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), "gelu");
    ASSERT_OK(LaunchUnary(GpuUnary::kGeluTanh, t, n, da.data(), out.data()));
    backend::Unary<float>(backend::UnaryKind::kGeluTanh, n, a.data(), want.data());
    ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), "gelu tanh");
    ASSERT_OK(LaunchUnaryGrad(GpuUnaryGrad::kGeluTanhGrad, t, n, da.data(), db.data(), out.data()));
    backend::GeluGrad<float>(n, a.data(), b.data(), want.data(), true);
    ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), "gelu tanh grad");
    ASSERT_OK(LaunchUnaryGrad(GpuUnaryGrad::kGeluGrad, t, n, da.data(), db.data(), out.data()));
    backend::GeluGrad<float>(n, a.data(), b.data(), want.data(), false);
    ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), "gelu grad");
    ASSERT_OK(LaunchUnaryGrad(GpuUnaryGrad::kReluGrad, t, n, da.data(), db.data(), out.data()));
    backend::ReluGrad<float>(n, a.data(), b.data(), want.data());
    ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), "relu grad");
  }
}

TEST(GpuKernelsTest, SoftmaxAndLayerNormMatchHost) {
  SKIP_WITHOUT_GPU();
  // 300 columns take the warp-per-row softmax, 1500 the block-per-row one.
  for (const int64_t cols : {int64_t{300}, int64_t{1500}})
    for (GpuDType t : kAll) {
      const int64_t rows = 7;
      std::vector<float> x = Rounded(t, Random(rows * cols, 3)), want(rows * cols);
      std::vector<float> scale = Rounded(t, Random(cols, 4)), bias = Rounded(t, Random(cols, 5));
      DeviceBuffer dx = Upload(t, x), ds = Upload(t, scale), dbias = Upload(t, bias),
                   dy = Upload(t, x);
      ASSERT_OK(LaunchSoftmax(t, rows, cols, dx.data(), dy.data()));
      backend::Softmax<float>(rows, cols, x.data(), want.data());
      ExpectClose(Download(t, dy, want.size()), Rounded(t, want), Tol(t), "softmax");
      ASSERT_OK(
          LaunchLayerNorm(t, rows, cols, dx.data(), ds.data(), dbias.data(), 1e-5f, dy.data()));
      backend::LayerNorm<float>(rows, cols, x.data(), scale.data(), bias.data(), 1e-5f,
                                want.data());
      ExpectClose(Download(t, dy, want.size()), Rounded(t, want), 4 * Tol(t), "layernorm");
    }
}

TEST(GpuKernelsTest, LlamaActivationsMatchHost) {
  SKIP_WITHOUT_GPU();
  const size_t n = 1000;
  for (GpuDType t : kAll) {
    const std::vector<float> a = Rounded(t, Random(n, 21, -6, 6)), b = Rounded(t, Random(n, 22));
    DeviceBuffer da = Upload(t, a), db = Upload(t, b), out = Upload(t, a);
    std::vector<float> want(n);
    const std::pair<GpuUnary, backend::UnaryKind> kinds[] = {
        {GpuUnary::kSigmoid, backend::UnaryKind::kSigmoid},
        {GpuUnary::kSin, backend::UnaryKind::kSin},
        {GpuUnary::kCos, backend::UnaryKind::kCos}};
    for (const auto& [gpu, host] : kinds) {
      ASSERT_OK(LaunchUnary(gpu, t, n, da.data(), out.data()));
      backend::Unary<float>(host, n, a.data(), want.data());
      ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), "sin, cos or sigmoid");
    }
    // SigmoidGrad takes the Sigmoid output y: feed it y = Sigmoid(a), rounded.
    backend::Unary<float>(backend::UnaryKind::kSigmoid, n, a.data(), want.data());
    const std::vector<float> y = Rounded(t, want);
    DeviceBuffer dy = Upload(t, y);
    ASSERT_OK(LaunchUnaryGrad(GpuUnaryGrad::kSigmoidGrad, t, n, dy.data(), db.data(), out.data()));
    backend::SigmoidGrad<float>(n, y.data(), b.data(), want.data());
    ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), "sigmoid grad");
  }
}

TEST(GpuKernelsTest, RmsNormAndItsGradientMatchHost) {
  SKIP_WITHOUT_GPU();
  const int64_t rows = 7, cols = 300;
  for (GpuDType t : kAll) {
    const std::vector<float> x = Rounded(t, Random(rows * cols, 23));
    const std::vector<float> scale = Rounded(t, Random(cols, 24, 0.5f, 1.5f));
    const std::vector<float> g = Rounded(t, Random(rows * cols, 25));
    std::vector<float> want(rows * cols), want_ds(cols);
    DeviceBuffer dx = Upload(t, x), ds = Upload(t, scale), dg = Upload(t, g), dy = Upload(t, x),
                 dscale = Upload(t, scale);
    ASSERT_OK(LaunchRmsNorm(t, rows, cols, dx.data(), ds.data(), 1e-5f, dy.data()));
    backend::RmsNorm<float>(rows, cols, x.data(), scale.data(), 1e-5f, want.data());
    ExpectClose(Download(t, dy, want.size()), Rounded(t, want), 4 * Tol(t), "rmsnorm");
    ASSERT_OK_AND_ASSIGN(DeviceBuffer inv_rms, DeviceBuffer::Allocate(rows * sizeof(float)));
    ASSERT_OK(LaunchRmsNormGrad(t, rows, cols, dx.data(), ds.data(), dg.data(), 1e-5f, dy.data(),
                                dscale.data(), static_cast<float*>(inv_rms.data())));
    backend::RmsNormGrad<float>(rows, cols, x.data(), scale.data(), g.data(), 1e-5f, want.data(),
                                want_ds.data());
    ExpectClose(Download(t, dy, want.size()), Rounded(t, want), 4 * Tol(t), "rmsnorm dx");
    // dscale sums 7 rows: a few more roundings.
    ExpectClose(Download(t, dscale, cols), Rounded(t, want_ds), 8 * Tol(t), "rmsnorm dscale");
  }
}

TEST(GpuKernelsTest, GatherLossAndOptimizersMatchHost) {
  SKIP_WITHOUT_GPU();
  const int64_t vocab = 50, width = 16, n = 512;
  for (GpuDType t : kAll) {
    std::vector<float> table = Rounded(t, Random(vocab * width, 6)), got(n * width),
                       want(n * width);
    std::vector<int64_t> idx(n);
    for (int64_t i = 0; i < n; ++i) idx[i] = (i * 7) % vocab;
    DeviceBuffer dt = Upload(t, table), dout = Upload(t, want);
    ASSERT_OK_AND_ASSIGN(DeviceBuffer di, DeviceBuffer::Allocate(n * sizeof(int64_t)));
    ASSERT_OK(di.CopyFromHost(idx.data(), n * sizeof(int64_t)));
    ASSERT_OK(LaunchGather(t, vocab, width, dt.data(), n, static_cast<const int64_t*>(di.data()),
                           dout.data()));
    ASSERT_TRUE(backend::Gather<float>(1, vocab, width, table.data(), n, idx.data(), want.data()));
    ExpectClose(Download(t, dout, want.size()), want, 0, "gather");  // a copy: exact

    std::vector<float> p = Rounded(t, Random(n, 7)), y = Rounded(t, Random(n, 8));
    std::vector<float> m = Rounded(t, Random(n, 9)), v = Rounded(t, Random(n, 10, 0, 1)), g(n);
    DeviceBuffer dp = Upload(t, p), dy = Upload(t, y), dg = Upload(t, p);
    ASSERT_OK_AND_ASSIGN(DeviceBuffer dloss, DeviceBuffer::Allocate(sizeof(float)));
    ASSERT_OK(LaunchMseLoss(t, n, dp.data(), dy.data(), n, static_cast<float*>(dloss.data())));
    std::vector<float> loss = Download(GpuDType::kF32, dloss, 1);
    EXPECT_NEAR(loss[0], backend::MseLoss<float>(n, p.data(), y.data(), n), 1e-4 * loss[0]);
    ASSERT_OK(LaunchMseLossGrad(t, n, dp.data(), dy.data(), n, dg.data()));
    backend::MseLossGrad<float>(n, p.data(), y.data(), n, g.data());
    ExpectClose(Download(t, dg, n), Rounded(t, g), Tol(t), "mse grad");

    std::vector<float> w_want(n), m_want(n), v_want(n);
    DeviceBuffer dw = Upload(t, p), dm = Upload(t, m), dv = Upload(t, v);
    ASSERT_OK(LaunchSgd(t, n, dw.data(), dy.data(), 0.1f, dg.data()));
    backend::Sgd<float>(n, p.data(), y.data(), 0.1f, w_want.data());
    ExpectClose(Download(t, dg, n), Rounded(t, w_want), Tol(t), "sgd");
    GpuAdamParams gp;
    gp.step = 3;
    backend::AdamParams hp;
    hp.step = 3;
    ASSERT_OK(LaunchAdam(t, n, dw.data(), dy.data(), dm.data(), dv.data(), gp, dw.data(), dm.data(),
                         dv.data()));
    backend::Adam<float>(n, p.data(), y.data(), m.data(), v.data(), hp, w_want.data(),
                         m_want.data(), v_want.data());
    ExpectClose(Download(t, dw, n), Rounded(t, w_want), Tol(t), "adam w");
    ExpectClose(Download(t, dm, n), Rounded(t, m_want), Tol(t), "adam m");
    ExpectClose(Download(t, dv, n), Rounded(t, v_want), Tol(t), "adam v");
  }
}

TEST(CublasGemmTest, RowMajorProductsMatchHostInEveryDtypeAndTransposition) {
  SKIP_WITHOUT_GPU();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<CublasGemm> gemm, CublasGemm::Create());
  const int64_t m = 33, n = 17, k = 64;
  for (GpuDType t : kAll) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        std::vector<float> a = Rounded(t, Random(m * k, 11)), b = Rounded(t, Random(k * n, 12));
        std::vector<float> want(m * n, 0.0f);
        DeviceBuffer da = Upload(t, a), db = Upload(t, b), dc = Upload(t, want);
        ASSERT_OK(gemm->Gemm(t, ta, tb, m, n, k, 1.0f, da.data(), db.data(), 0.0f, dc.data()));
        backend::Gemm<float>(ta, tb, m, n, k, 1.0f, a.data(), b.data(), 0.0f, want.data());
        // Sums of 64 products of O(1): the f16/bf16 output rounding dominates.
        ExpectClose(Download(t, dc, want.size()), Rounded(t, want), 2 * Tol(t), GpuDTypeName(t));
      }
    }
  }
}

TEST(CublasGemmTest, HalfOperandsWriteAndAccumulateAnF32Product) {
  // Megatron's gradient accumulation fusion (MatMulGrad {dw_dtype = f32}):
  // bf16/f16 operands, the f32 accumulators written as f32 (no output
  // rounding) and, with beta = 1, added to an f32 running sum in place.
  SKIP_WITHOUT_GPU();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<CublasGemm> gemm, CublasGemm::Create());
  // dw [in, out] = x^T dy: x is [rows, in], dy is [rows, out], both row-major.
  const int64_t rows = 48, in = 96, out = 40;
  for (GpuDType t : {GpuDType::kF16, GpuDType::kBF16}) {
    for (float beta : {0.0f, 1.0f}) {
      SCOPED_TRACE(std::string(GpuDTypeName(t)) + " beta " + std::to_string(beta));
      std::vector<float> x = Rounded(t, Random(rows * in, 21)),
                         dy = Rounded(t, Random(rows * out, 22));
      std::vector<float> want = Random(in * out, 23);
      DeviceBuffer dx = Upload(t, x), ddy = Upload(t, dy), dw = Upload(GpuDType::kF32, want);
      ASSERT_OK(gemm->Gemm(t, GpuDType::kF32, /*trans_a=*/true, /*trans_b=*/false, in, out, rows,
                           1.0f, dx.data(), ddy.data(), beta, dw.data()));
      backend::Gemm<float>(true, false, in, out, rows, 1.0f, x.data(), dy.data(), beta,
                           want.data());
      // Exact operands, f32 accumulators and an f32 result: only the order of the sums differs.
      ExpectClose(Download(GpuDType::kF32, dw, want.size()), want, 1e-4, GpuDTypeName(t));
    }
  }
}

TEST(CublasGemmTest, StridedBatchedMatchesHostIncludingAReusedMatrix) {
  SKIP_WITHOUT_GPU();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<CublasGemm> gemm, CublasGemm::Create());
  const int64_t batch = 6, m = 9, n = 7, k = 16;
  for (GpuDType t : kAll) {
    for (int64_t a_stride : {m * k, int64_t{0}}) {  // 0: one matrix against a batch
      std::vector<float> a = Rounded(t, Random((a_stride == 0 ? 1 : batch) * m * k, 21));
      std::vector<float> b = Rounded(t, Random(batch * k * n, 22));
      std::vector<float> want(batch * m * n, 0.0f);
      DeviceBuffer da = Upload(t, a), db = Upload(t, b), dc = Upload(t, want);
      ASSERT_OK(gemm->GemmStridedBatched(t, false, false, m, n, k, 1.0f, da.data(), a_stride,
                                         db.data(), k * n, 0.0f, dc.data(), m * n, batch));
      backend::BatchedMatMul<float>(batch, m, n, k, a.data(), a_stride, b.data(), k * n,
                                    want.data(), m * n);
      ExpectClose(Download(t, dc, want.size()), Rounded(t, want), 2 * Tol(t), GpuDTypeName(t));
    }
  }
}

// GPT-2's attention: a bias over rows, a scalar divisor, the causal Where.
TEST(GpuKernelsTest, BroadcastBinaryAndWhereMatchHost) {
  SKIP_WITHOUT_GPU();
  const std::vector<int64_t> out_shape = {2, 3, 5, 5};
  const size_t n = 150;
  for (GpuDType t : kAll) {
    std::vector<float> x = Rounded(t, Random(n, 31)), bias = Rounded(t, Random(5, 32));
    std::vector<float> scalar = {Rounded(t, {3.0f})[0]};
    DeviceBuffer dx = Upload(t, x), dbias = Upload(t, bias), ds = Upload(t, scalar);
    DeviceBuffer out = Upload(t, x);
    std::vector<float> want(n);
    const std::vector<int64_t> bias_padded = {1, 1, 1, 5}, scalar_padded = {1, 1, 1, 1};
    ASSERT_OK(LaunchBroadcastBinary(GpuBinary::kAdd, t, MakeGpuBroadcast(out_shape, {out_shape, {5}}),
                                    dx.data(), dbias.data(), out.data()));
    backend::BinaryBroadcast<float>(backend::BinaryKind::kAdd, out_shape, out_shape, x.data(),
                                    bias_padded, bias.data(), want.data());
    ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), "add bias");
    ASSERT_OK(LaunchBroadcastBinary(GpuBinary::kDiv, t, MakeGpuBroadcast(out_shape, {out_shape, {}}),
                                    dx.data(), ds.data(), out.data()));
    backend::BinaryBroadcast<float>(backend::BinaryKind::kDiv, out_shape, out_shape, x.data(),
                                    scalar_padded, scalar.data(), want.data());
    ExpectClose(Download(t, out, n), Rounded(t, want), Tol(t), "div scalar");
    // cond [5, 5] lower-triangular, x full, y a scalar.
    std::vector<uint8_t> cond(25);
    for (size_t i = 0; i < 25; ++i) cond[i] = (i % 5) <= (i / 5) ? 1 : 0;
    ASSERT_OK_AND_ASSIGN(DeviceBuffer dc, DeviceBuffer::Allocate(cond.size()));
    ASSERT_OK(dc.CopyFromHost(cond.data(), cond.size()));
    ASSERT_OK(LaunchWhere(static_cast<int>(ByteWidth(t)),
                          MakeGpuBroadcast(out_shape, {{5, 5}, out_shape, {}}), dc.data(),
                          dx.data(), ds.data(), out.data()));
    const std::vector<int64_t> cond_padded = {1, 1, 5, 5};
    backend::Where<float>(out_shape, cond_padded, cond.data(), out_shape, x.data(), scalar_padded,
                          scalar.data(), want.data());
    ExpectClose(Download(t, out, n), want, 0, "where");  // selection is exact
  }
}

// Bytes of a host vector on the device, and back.
template <typename T>
DeviceBuffer UploadRaw(const std::vector<T>& host) {
  StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(host.size() * sizeof(T));
  EXPECT_OK(buffer.status());
  EXPECT_OK(buffer->CopyFromHost(host.data(), host.size() * sizeof(T)));
  return std::move(*buffer);
}
template <typename T>
std::vector<T> DownloadRaw(const DeviceBuffer& buffer, size_t n) {
  std::vector<T> host(n);
  EXPECT_OK(buffer.CopyToHost(host.data(), n * sizeof(T)));
  return host;
}

// The masked ids of a vocabulary-parallel lookup (sharding/partition.cc
// EmitMaskIds) for a device holding rows [4, 8): shifted = ids - 4,
// t = shifted < 0 ? 4 : shifted, in = t < 4, safe = in ? t : 0.
TEST(GpuKernelsTest, IndexArithmeticOfAVocabularyParallelLookup) {
  SKIP_WITHOUT_GPU();
  const std::vector<int64_t> shape = {2, 3};
  DeviceBuffer ids = UploadRaw<int64_t>({0, 5, 9, 3, 7, 12});
  DeviceBuffer lo = UploadRaw<int64_t>({4}), rows = UploadRaw<int64_t>({4});
  DeviceBuffer zero = UploadRaw<int64_t>({0});
  DeviceBuffer shifted = UploadRaw<int64_t>(std::vector<int64_t>(6)),
               t = UploadRaw<int64_t>(std::vector<int64_t>(6));
  DeviceBuffer safe = UploadRaw<int64_t>(std::vector<int64_t>(6));
  DeviceBuffer below = UploadRaw<uint8_t>(std::vector<uint8_t>(6)),
               in = UploadRaw<uint8_t>(std::vector<uint8_t>(6));
  const GpuBroadcast by_scalar = MakeGpuBroadcast(shape, {shape, {}});
  const GpuBroadcast select = MakeGpuBroadcast(shape, {shape, {}, shape});
  ASSERT_OK(LaunchIndexBinary(GpuIndexBinary::kSub, true, by_scalar, ids.data(), lo.data(),
                              shifted.data()));
  ASSERT_OK(LaunchIndexBinary(GpuIndexBinary::kLess, true, by_scalar, shifted.data(), zero.data(),
                              below.data()));
  ASSERT_OK(LaunchWhere(8, select, below.data(), rows.data(), shifted.data(), t.data()));
  ASSERT_OK(
      LaunchIndexBinary(GpuIndexBinary::kLess, true, by_scalar, t.data(), rows.data(), in.data()));
  ASSERT_OK(LaunchWhere(8, MakeGpuBroadcast(shape, {shape, shape, {}}), in.data(), t.data(),
                        zero.data(), safe.data()));
  EXPECT_EQ(DownloadRaw<int64_t>(shifted, 6), (std::vector<int64_t>{-4, 1, 5, -1, 3, 8}));
  EXPECT_EQ(DownloadRaw<uint8_t>(below, 6), (std::vector<uint8_t>{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(DownloadRaw<int64_t>(t, 6), (std::vector<int64_t>{4, 1, 5, 4, 3, 8}));
  EXPECT_EQ(DownloadRaw<uint8_t>(in, 6), (std::vector<uint8_t>{0, 1, 0, 0, 1, 0}));
  EXPECT_EQ(DownloadRaw<int64_t>(safe, 6), (std::vector<int64_t>{0, 1, 0, 0, 3, 0}));
  // i32: a product broadcast over rows, Equal, Not (in place).
  DeviceBuffer a = UploadRaw<int32_t>({1, 2, 3, 4, 5, 6}), col = UploadRaw<int32_t>({-1, 2, 0});
  DeviceBuffer prod = UploadRaw<int32_t>(std::vector<int32_t>(6));
  DeviceBuffer eq = UploadRaw<uint8_t>(std::vector<uint8_t>(6));
  const GpuBroadcast by_row = MakeGpuBroadcast(shape, {shape, {3}});
  ASSERT_OK(
      LaunchIndexBinary(GpuIndexBinary::kMul, false, by_row, a.data(), col.data(), prod.data()));
  ASSERT_OK(
      LaunchIndexBinary(GpuIndexBinary::kEqual, false, by_row, a.data(), col.data(), eq.data()));
  ASSERT_OK(LaunchNot(6, eq.data(), eq.data()));
  EXPECT_EQ(DownloadRaw<int32_t>(prod, 6), (std::vector<int32_t>{-1, 4, 0, -4, 10, 0}));
  EXPECT_EQ(DownloadRaw<uint8_t>(eq, 6), (std::vector<uint8_t>{1, 0, 1, 1, 1, 1}));
}

TEST(GpuKernelsTest, PermuteAndTriluMoveBytesAsTheHostDoes) {
  SKIP_WITHOUT_GPU();
  const std::vector<int64_t> shape = {2, 3, 4, 5};
  const size_t n = 120;
  for (int bytes : {1, 2, 4, 8}) {
    std::vector<uint8_t> x(n * static_cast<size_t>(bytes));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 7 + 3);
    ASSERT_OK_AND_ASSIGN(DeviceBuffer dx, DeviceBuffer::Allocate(x.size()));
    ASSERT_OK_AND_ASSIGN(DeviceBuffer dy, DeviceBuffer::Allocate(x.size()));
    ASSERT_OK(dx.CopyFromHost(x.data(), x.size()));
    std::vector<uint8_t> got(x.size()), want(x.size());
    for (const std::vector<int64_t>& perm :
         {std::vector<int64_t>{0, 2, 1, 3}, std::vector<int64_t>{0, 2, 3, 1}, std::vector<int64_t>{3, 2, 1, 0}}) {
      ASSERT_OK(LaunchPermute(bytes, MakeGpuPermute(shape, perm), dx.data(), dy.data()));
      ASSERT_OK(SynchronizeDevice());
      ASSERT_OK(dy.CopyToHost(got.data(), got.size()));
      backend::Transpose(shape, perm, bytes, x.data(), want.data());
      EXPECT_EQ(got, want) << bytes << "-byte elements, perm " << perm[1] << perm[2] << perm[3];
    }
    for (bool upper : {false, true}) {
      ASSERT_OK(LaunchTrilu(bytes, 6, 4, 5, 0, upper, dx.data(), dy.data()));
      ASSERT_OK(SynchronizeDevice());
      ASSERT_OK(dy.CopyToHost(got.data(), got.size()));
      backend::Trilu(6, 4, 5, 0, upper, bytes, x.data(), want.data());
      EXPECT_EQ(got, want) << bytes << "-byte elements, upper " << upper;
    }
  }
}

// Shapes whose transposes take the tiled kernel (edges of at least 32, not multiples of its
// 32 x 32 tile).
TEST(GpuKernelsTest, TiledTransposesMoveBytesAsTheHostDoes) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{37, 70}, {1, 0}}, {{3, 45, 33}, {0, 2, 1}}, {{2, 1, 65, 40}, {0, 1, 3, 2}}};
  for (const auto& [shape, perm] : cases) {
    for (int bytes : {2, 4}) {
      size_t n = static_cast<size_t>(bytes);
      for (int64_t e : shape) n *= static_cast<size_t>(e);
      std::vector<uint8_t> x(n), got(n), want(n);
      for (size_t i = 0; i < n; ++i) x[i] = static_cast<uint8_t>(i * 13 + 5);
      ASSERT_OK_AND_ASSIGN(DeviceBuffer dx, DeviceBuffer::Allocate(n));
      ASSERT_OK_AND_ASSIGN(DeviceBuffer dy, DeviceBuffer::Allocate(n));
      ASSERT_OK(dx.CopyFromHost(x.data(), n));
      ASSERT_OK(LaunchPermute(bytes, MakeGpuPermute(shape, perm), dx.data(), dy.data()));
      ASSERT_OK(SynchronizeDevice());
      ASSERT_OK(dy.CopyToHost(got.data(), n));
      backend::Transpose(shape, perm, bytes, x.data(), want.data());
      EXPECT_EQ(got, want) << bytes << "-byte elements, rank " << shape.size();
    }
  }
}

// The index arithmetic is host code: checked without a GPU.
TEST(GpuIndexTest, BroadcastStridesAreZeroAlongBroadcastAxes) {
  const GpuBroadcast s = MakeGpuBroadcast({2, 3, 4}, {{2, 3, 4}, {4}, {3, 1}});
  ASSERT_EQ(s.rank, 3);
  EXPECT_EQ((std::vector<int64_t>(s.dims, s.dims + 3)), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ((std::vector<int64_t>(s.strides[0], s.strides[0] + 3)), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ((std::vector<int64_t>(s.strides[1], s.strides[1] + 3)), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ((std::vector<int64_t>(s.strides[2], s.strides[2] + 3)), (std::vector<int64_t>{0, 1, 0}));
}

TEST(GpuIndexTest, PermuteWalksTheInputWithPermutedStrides) {
  // [2, 3, 4, 5] -> perm {0, 2, 3, 1} -> [2, 4, 5, 3]; input strides 60, 20, 5, 1. Output
  // axes 1 and 2 stay adjacent and in order in the input: they merge into one of 20.
  const GpuPermute p = MakeGpuPermute({2, 3, 4, 5}, {0, 2, 3, 1});
  ASSERT_EQ(p.rank, 3);
  EXPECT_EQ((std::vector<int64_t>(p.out_dims, p.out_dims + 3)), (std::vector<int64_t>{2, 20, 3}));
  EXPECT_EQ((std::vector<int64_t>(p.in_strides, p.in_strides + 3)),
            (std::vector<int64_t>{60, 1, 20}));
}

TEST(GpuIndexTest, BroadcastMergesAxesThatEveryOperandWalksAlike) {
  // A bias add [2, 3, 4] + [4]: the two outer axes are contiguous in x and broadcast in the
  // bias, so they merge; extents of 1 drop.
  const GpuBroadcast s = MakeGpuBroadcast({2, 1, 3, 4}, {{2, 1, 3, 4}, {4}});
  ASSERT_EQ(s.rank, 2);
  EXPECT_EQ((std::vector<int64_t>(s.dims, s.dims + 2)), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ((std::vector<int64_t>(s.strides[0], s.strides[0] + 2)), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ((std::vector<int64_t>(s.strides[1], s.strides[1] + 2)), (std::vector<int64_t>{0, 1}));
  // Same shapes everywhere: one axis.
  const GpuBroadcast flat = MakeGpuBroadcast({2, 3, 4}, {{2, 3, 4}, {2, 3, 4}});
  ASSERT_EQ(flat.rank, 1);
  EXPECT_EQ(flat.dims[0], 24);
}

TEST(GpuIndexTest, PermuteOfTheAttentionHeadsIsThreeDimensional) {
  // [b, s, h, d] -> [b, h, s, d] with b = 1: the unit batch drops, nothing else merges.
  const GpuPermute p = MakeGpuPermute({1, 8, 4, 16}, {0, 2, 1, 3});
  ASSERT_EQ(p.rank, 3);
  EXPECT_EQ((std::vector<int64_t>(p.out_dims, p.out_dims + 3)), (std::vector<int64_t>{4, 8, 16}));
  EXPECT_EQ((std::vector<int64_t>(p.in_strides, p.in_strides + 3)),
            (std::vector<int64_t>{16, 64, 1}));
}

TEST(NcclCommunicatorTest, SingleRankCollectivesAreIdentities) {
  SKIP_WITHOUT_GPU();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NcclCommunicator> comm,
                       NcclCommunicator::Create(MPI_COMM_SELF));
  EXPECT_EQ(comm->size(), 1);
  std::vector<float> x = Random(256, 13);
  DeviceBuffer dx = Upload(GpuDType::kF32, x), dy = Upload(GpuDType::kF32, x);
  ASSERT_OK(comm->AllReduceSum(GpuDType::kF32, dx.data(), dy.data(), 256, nullptr));
  ExpectClose(Download(GpuDType::kF32, dy, 256), x, 0, "allreduce");
  ASSERT_OK(comm->AllGather(GpuDType::kF32, dx.data(), dy.data(), 256, nullptr));
  ExpectClose(Download(GpuDType::kF32, dy, 256), x, 0, "allgather");
  ASSERT_OK(comm->ReduceScatterSum(GpuDType::kF32, dx.data(), dy.data(), 256, nullptr));
  ExpectClose(Download(GpuDType::kF32, dy, 256), x, 0, "reducescatter");
}

}  // namespace
}  // namespace distir::gpu
