#include "calibrate/gpu_benchmarks.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "backend/cpu/host_kernels.h"
#include "backend/executor.h"
#include "backend/gpu/cublas_gemm.h"
#include "backend/gpu/cuda_check.h"
#include "backend/gpu/device_buffer.h"
#include "backend/gpu/gpu_kernels.h"
#include "backend/gpu/nccl_comm.h"
#include "calibrate/comm_benchmarks.h"

namespace distir::calibrate {
namespace {

using gpu::DeviceBuffer;
using gpu::GpuDType;

// One non-blocking stream and a pair of events that bracket a sample on it.
class StreamTimer {
 public:
  static StatusOr<std::unique_ptr<StreamTimer>> Create() {
    auto t = std::unique_ptr<StreamTimer>(new StreamTimer());
    DISTIR_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&t->stream_, cudaStreamNonBlocking));
    DISTIR_CUDA_RETURN_IF_ERROR(cudaEventCreate(&t->start_));
    DISTIR_CUDA_RETURN_IF_ERROR(cudaEventCreate(&t->stop_));
    return t;
  }
  ~StreamTimer() {
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  void* stream() const { return stream_; }

  // Seconds on the GPU for `calls` calls of `body` enqueued back to back.
  StatusOr<double> Seconds(const std::function<Status()>& body, int calls) {
    DISTIR_CUDA_RETURN_IF_ERROR(cudaEventRecord(start_, stream_));
    for (int i = 0; i < calls; ++i) DISTIR_RETURN_IF_ERROR(body());
    DISTIR_CUDA_RETURN_IF_ERROR(cudaEventRecord(stop_, stream_));
    DISTIR_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop_));
    float ms = 0;
    DISTIR_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start_, stop_));
    return 1e-3 * static_cast<double>(ms);
  }

  Status Synchronize() {
    DISTIR_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
    return Status::Ok();
  }

 private:
  StreamTimer() = default;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// The GPU analogue of MedianSecondsPerCall (timer.h): warm-up calls and time,
// a batch sized from one call so that a sample lasts min_sample_s, then samples
// until min_samples and min_total_s are both reached.
StatusOr<double> MedianGpuSecondsPerCall(StreamTimer& timer, const std::function<Status()>& body,
                                         const TimingOptions& options) {
  for (int i = 0; i < options.warmup; ++i) DISTIR_RETURN_IF_ERROR(body());
  const auto warm_until =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(options.warmup_s);
  while (std::chrono::steady_clock::now() < warm_until) {
    DISTIR_RETURN_IF_ERROR(body());
    DISTIR_RETURN_IF_ERROR(timer.Synchronize());
  }
  DISTIR_ASSIGN_OR_RETURN(double first, timer.Seconds(body, 1));
  first = std::max(first, 1e-7);  // the event clock's resolution is about 0.5 us
  const int batch = static_cast<int>(std::clamp(std::ceil(options.min_sample_s / first), 1.0, 1e5));
  std::vector<double> samples;
  double total = 0;
  while (static_cast<int>(samples.size()) < options.max_samples &&
         (static_cast<int>(samples.size()) < options.min_samples || total < options.min_total_s)) {
    DISTIR_ASSIGN_OR_RETURN(double s, timer.Seconds(body, batch));
    total += s;
    samples.push_back(s / batch);
  }
  return MedianSample(std::move(samples));
}

// `n` elements of `t` uniform in [-1, 1]. Random, not zero, operands: a GPU
// multiplying zeros draws less power and clocks higher than on real data.
StatusOr<DeviceBuffer> RandomBuffer(GpuDType t, int64_t n, uint32_t seed) {
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer buf,
                          DeviceBuffer::Allocate(static_cast<size_t>(n) * gpu::ByteWidth(t)));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = dist(rng);
  if (t == GpuDType::kF32) {
    DISTIR_RETURN_IF_ERROR(buf.CopyFromHost(values.data(), values.size() * 4));
    return buf;
  }
  std::vector<uint16_t> bits(values.size());
  if (t == GpuDType::kF16) backend::FloatToHalf(n, values.data(), bits.data());
  if (t == GpuDType::kBF16) backend::FloatToBFloat16(n, values.data(), bits.data());
  DISTIR_RETURN_IF_ERROR(buf.CopyFromHost(bits.data(), bits.size() * 2));
  return buf;
}

std::string ShapeName(const MatMulShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
         (s.trans_a ? "T" : "N") + (s.trans_b ? "T" : "N");
}

// The largest operand of any shape, in elements: one set of buffers serves all.
int64_t LargestOperand(const std::vector<MatMulShape>& shapes) {
  int64_t most = 1;
  for (const MatMulShape& s : shapes) most = std::max({most, s.m * s.k, s.k * s.n, s.m * s.n});
  return most;
}

Status TimeMatMuls(GpuDType t, const GpuSweep& sweep, StreamTimer& timer,
                   std::vector<Measurement>& out) {
  const int64_t most = LargestOperand(sweep.matmul_shapes);
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer a, RandomBuffer(t, most, 1));
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer b, RandomBuffer(t, most, 2));
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer c,  // written only: beta is 0
                          DeviceBuffer::Allocate(static_cast<size_t>(most) * gpu::ByteWidth(t)));
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<gpu::CublasGemm> gemm,
                          gpu::CublasGemm::Create(timer.stream()));
  const double width = static_cast<double>(gpu::ByteWidth(t));
  for (const MatMulShape& s : sweep.matmul_shapes) {
    const auto call = [&] {
      return gemm->Gemm(t, s.trans_a, s.trans_b, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f,
                        c.data());
    };
    DISTIR_ASSIGN_OR_RETURN(double seconds, MedianGpuSecondsPerCall(timer, call, sweep.timing));
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n);
    const double k = static_cast<double>(s.k);
    out.push_back({"MatMul", gpu::GpuDTypeName(t), ShapeName(s), 2 * m * n * k,
                   (m * k + k * n + m * n) * width, 1, seconds});
  }
  return Status::Ok();
}

Status TimeElementwise(const GpuSweep& sweep, StreamTimer& timer, std::vector<Measurement>& out) {
  if (sweep.elementwise_sizes.empty()) return Status::Ok();
  const int64_t most =
      *std::max_element(sweep.elementwise_sizes.begin(), sweep.elementwise_sizes.end());
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer x, RandomBuffer(GpuDType::kF32, most, 4));
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer y, RandomBuffer(GpuDType::kF32, most, 5));
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer z, RandomBuffer(GpuDType::kF32, most, 6));
  void* stream = timer.stream();
  for (int64_t n : sweep.elementwise_sizes) {
    const auto add = [&] {
      return gpu::LaunchBinary(gpu::GpuBinary::kAdd, GpuDType::kF32, n, x.data(), y.data(),
                               z.data(), stream);
    };
    DISTIR_ASSIGN_OR_RETURN(double seconds, MedianGpuSecondsPerCall(timer, add, sweep.timing));
    const double e = static_cast<double>(n);
    out.push_back({"Add", "f32", std::to_string(n), e, 12 * e, 1, seconds});
  }
  for (int64_t n : sweep.elementwise_sizes) {
    const auto gelu = [&] {
      return gpu::LaunchUnary(gpu::GpuUnary::kGelu, GpuDType::kF32, n, x.data(), z.data(), stream);
    };
    DISTIR_ASSIGN_OR_RETURN(double seconds, MedianGpuSecondsPerCall(timer, gelu, sweep.timing));
    const double e = static_cast<double>(n);
    out.push_back({"Gelu", "f32", std::to_string(n), 5 * e, 8 * e, 1, seconds});
  }
  return Status::Ok();
}

// The f32 elements that one call of `op` moves as its S, on `ranks` ranks:
// AllGather's output is whole blocks, so S is rounded down to one.
int64_t CommCount(CommOp op, int64_t bytes, int ranks) {
  const int64_t count = bytes / 4;
  return op == CommOp::kAllGather ? count / ranks * ranks : count;
}

// One call of `op` with S = count f32 elements, enqueued on the timer's stream.
Status CallOnce(CommOp op, gpu::NcclCommunicator& nccl, int64_t count, const DeviceBuffer& send,
                DeviceBuffer& recv, void* stream) {
  const GpuDType f32 = GpuDType::kF32;
  if (op == CommOp::kAllReduce)
    return nccl.AllReduceSum(f32, send.data(), recv.data(), count, stream);
  if (op == CommOp::kAllGather)
    return nccl.AllGather(f32, send.data(), recv.data(), count / nccl.size(), stream);
  // Ping-pong between ranks 0 and 1: a round trip is two one-way messages.
  if (nccl.rank() == 0) {
    DISTIR_RETURN_IF_ERROR(nccl.Send(f32, send.data(), count, 1, stream));
    return nccl.Recv(f32, recv.data(), count, 1, stream);
  }
  if (nccl.rank() != 1) return Status::Ok();
  DISTIR_RETURN_IF_ERROR(nccl.Recv(f32, recv.data(), count, 0, stream));
  return nccl.Send(f32, send.data(), count, 0, stream);
}

// Median over trials of the slowest rank's GPU seconds per call. Every rank
// starts a trial after a barrier on an idle stream, so the events of the ranks
// bracket the same calls. Valid on every rank of `sub`.
StatusOr<double> TimeOnSub(CommOp op, MPI_Comm sub, gpu::NcclCommunicator& nccl, int64_t count,
                           const GpuSweep& sweep, StreamTimer& timer, const DeviceBuffer& send,
                           DeviceBuffer& recv) {
  // Expected ~ 20 us + S / 10 GB/s: enough calls to fill a trial.
  const double guess = 2e-5 + 4.0 * static_cast<double>(count) / 1e10;
  const int calls = std::clamp(static_cast<int>(sweep.comm_trial_s / guess), 2, 1000);
  const auto call = [&] { return CallOnce(op, nccl, count, send, recv, timer.stream()); };
  std::vector<double> trials;
  for (int t = 0; t <= sweep.comm_trials; ++t) {  // trial 0 warms up (NCCL's buffers, channels)
    if (MPI_Barrier(sub) != MPI_SUCCESS) return Internal() << "MPI_Barrier failed";
    DISTIR_ASSIGN_OR_RETURN(double seconds, timer.Seconds(call, calls));
    double mine = seconds / calls, slowest = 0;
    if (MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, sub) != MPI_SUCCESS)
      return Internal() << "MPI_Allreduce failed";
    if (t > 0) trials.push_back(slowest);
  }
  const double seconds = MedianSample(std::move(trials));
  return op == CommOp::kSend ? seconds / 2 : seconds;
}

// Every op over every size on `sub` (the first k ranks), appended on its rank 0.
Status SweepSub(MPI_Comm sub, int k, const GpuSweep& sweep, std::vector<Measurement>& out) {
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<gpu::NcclCommunicator> nccl,
                          gpu::NcclCommunicator::Create(sub));
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<StreamTimer> timer, StreamTimer::Create());
  // One pair of buffers of the largest S serves every call; NCCL's speed does
  // not depend on the values, so random ones are not needed.
  const int64_t most =
      *std::max_element(sweep.message_bytes.begin(), sweep.message_bytes.end()) / 4;
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer send, DeviceBuffer::Allocate(static_cast<size_t>(most) * 4));
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer recv, DeviceBuffer::Allocate(static_cast<size_t>(most) * 4));
  DISTIR_CUDA_RETURN_IF_ERROR(cudaMemset(send.data(), 0, send.size()));
  for (CommOp op : {CommOp::kSend, CommOp::kAllReduce, CommOp::kAllGather}) {
    if (op == CommOp::kSend && k != 2) continue;  // point-to-point: two ranks say it all
    for (int64_t bytes : sweep.message_bytes) {
      const int64_t count = CommCount(op, bytes, k);
      if (count <= 0) continue;
      DISTIR_ASSIGN_OR_RETURN(double t,
                              TimeOnSub(op, sub, *nccl, count, sweep, *timer, send, recv));
      if (nccl->rank() == 0)
        out.push_back({CommOpName(op), "f32", std::to_string(4 * count) + " B", 0,
                       4.0 * static_cast<double>(count), k, t});
    }
  }
  return Status::Ok();
}

// `mine`, or an error on every rank when any rank of `comm` failed, so that no
// rank goes on to the next sweep (and waits there for one that stopped).
Status AgreeOnFailure(MPI_Comm comm, Status mine) {
  int failed = mine.ok() ? 0 : 1, any = 0;
  if (MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    return Internal() << "MPI_Allreduce failed";
  if (!mine.ok() || any == 0) return mine;
  return Internal() << "the NCCL benchmarks failed on another rank";
}

}  // namespace

GpuSweep DefaultGpuSweep() {
  GpuSweep s;
  AppendMatMulLayouts({256, 1024, 4096}, s.matmul_shapes);
  // Skinny products (small batches, narrow heads), where the FLOP rate is far
  // from the peak and the regression's byte term matters, and one large square.
  for (int64_t small : {16, 64}) {
    s.matmul_shapes.push_back({small, 4096, 4096});
    s.matmul_shapes.push_back({4096, small, 4096});
    s.matmul_shapes.push_back({4096, 4096, small});
    s.matmul_shapes.push_back({small, 8192, 8192});
  }
  s.matmul_shapes.push_back({8192, 8192, 8192});
  s.matmul_dtypes = {GpuDType::kF32, GpuDType::kF16, GpuDType::kBF16};
  for (int64_t n = 1; n <= (int64_t{1} << 26); n *= 4) s.elementwise_sizes.push_back(n);
  s.timing.min_sample_s = 5e-3;
  s.timing.min_total_s = 0.025;
  s.timing.warmup_s = 2e-3;
  for (int64_t b = 8 << 10; b <= (int64_t{256} << 20); b *= 4) s.message_bytes.push_back(b);
  s.comm_trial_s = 0.02;
  return s;
}

GpuSweep QuickGpuSweep() {
  GpuSweep s;
  // Small shapes only are all launch-bound on an H200 (64^3 to 256x256x64 took
  // 8-14 us in every dtype, so no FLOP rate could be fitted): the quick sweep
  // also needs products that take far longer than a launch, up to 4096^3
  // (~2.5 ms in f32, ~0.2 ms in bf16).
  s.matmul_shapes = {{64, 64, 64},
                     {256, 256, 64, true, false},
                     {1024, 1024, 1024, false, true},
                     {2048, 2048, 2048},
                     {4096, 4096, 4096}};
  s.matmul_dtypes = {GpuDType::kF32, GpuDType::kF16, GpuDType::kBF16};
  s.elementwise_sizes = {1, 4096, 1 << 20, 1 << 24};
  s.timing.min_samples = 3;
  s.timing.min_total_s = 1e-3;
  s.timing.min_sample_s = 1e-4;
  s.message_bytes = {4096, 1 << 20};
  s.comm_trials = 3;
  s.comm_trial_s = 1e-3;
  return s;
}

Status SelectRankGpu(MPI_Comm comm) {
  const int count = gpu::DeviceCount();
  if (count == 0) return FailedPrecondition() << "no CUDA device is visible";
  DISTIR_ASSIGN_OR_RETURN(const int local, backend::NodeLocalRank(comm));
  DISTIR_CUDA_RETURN_IF_ERROR(cudaSetDevice(local % count));
  return Status::Ok();
}

StatusOr<std::vector<Measurement>> RunGpuComputeBenchmarks(const GpuSweep& sweep) {
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<StreamTimer> timer, StreamTimer::Create());
  std::vector<Measurement> out;
  for (GpuDType t : sweep.matmul_dtypes) DISTIR_RETURN_IF_ERROR(TimeMatMuls(t, sweep, *timer, out));
  DISTIR_RETURN_IF_ERROR(TimeElementwise(sweep, *timer, out));
  return out;
}

StatusOr<std::vector<Measurement>> RunNcclCommBenchmarks(MPI_Comm comm, const GpuSweep& sweep) {
  int world = 1, rank = 0;
  MPI_Comm_size(comm, &world);
  MPI_Comm_rank(comm, &rank);
  std::vector<Measurement> out;
  if (world < 2 || sweep.message_bytes.empty()) return out;
  DISTIR_ASSIGN_OR_RETURN(const std::vector<int> counts, CommRankCounts(sweep.rank_counts, world));
  for (int k : counts) {
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(comm, rank < k ? 0 : MPI_UNDEFINED, rank, &sub);
    Status swept = Status::Ok();
    if (sub != MPI_COMM_NULL) {
      swept = SweepSub(sub, k, sweep, out);
      MPI_Comm_free(&sub);
    }
    DISTIR_RETURN_IF_ERROR(AgreeOnFailure(comm, std::move(swept)));
  }
  return out;
}

}  // namespace distir::calibrate
