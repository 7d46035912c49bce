// A few host threads that one stage call owns, for host bookkeeping that a
// device pipeline waits on (stedc's merge plans on GPU backends).
//
// Why not a Kokkos parallel region of the host space: on GPU builds that
// region wakes every OpenMP thread of the process (16 on the H200 machines),
// and under the default wait policy they then spin on all cores while the
// calling thread issues the next launches. H200, generalized solve with all
// vectors at n = 16384, three processes each: the tridiagonal step took
// 0.103-0.109 s with the region on 16 threads, 0.087-0.089 s on 4 threads
// and 0.088-0.091 s with OMP_WAIT_POLICY=passive (0.180-0.205 s against
// 0.162-0.163 s at 20694); a traced solve showed 4-5 ms stalls of single
// launch calls and plan steps, with the device idle, right after regions.
// Here the helpers sleep on a condition variable between jobs, the caller
// takes items too, and items are handed out one at a time from a counter:
// a helper that wakes late finds nothing left, so the caller waits only for
// items already being worked on, never for an idle helper.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace keig::stages::detail {

class HostWorkers {
 public:
  // helpers: threads besides the caller's (0: everything on the caller).
  explicit HostWorkers(int helpers) {
    const unsigned cores = std::thread::hardware_concurrency();
    const int most = cores > 1 ? static_cast<int>(cores) - 1 : 0;
    helpers = std::max(0, std::min(helpers, most));
    threads_.reserve(static_cast<std::size_t>(helpers));
    for (int t = 0; t < helpers; ++t) threads_.emplace_back([this] { serve(); });
  }
  HostWorkers(const HostWorkers&) = delete;
  HostWorkers& operator=(const HostWorkers&) = delete;
  ~HostWorkers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  int threads() const { return static_cast<int>(threads_.size()) + 1; }

  // body(i) for every i in [0, count), on the caller and the helpers; returns
  // when all are done. The first exception a body throws is rethrown here
  // (the other items still run).
  void run(std::int64_t count, const std::function<void(std::int64_t)>& body) {
    if (count <= 0) return;
    auto job = std::make_shared<Job>(count, body);
    if (!threads_.empty() && count > 1) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = job;
      }
      wake_.notify_all();
    }
    work(*job);
    {
      std::unique_lock<std::mutex> lock(job->mutex);
      job->finished.wait(lock, [&] { return job->done == job->count; });
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (job_ == job) job_.reset();
    }
    if (job->error) std::rethrow_exception(job->error);
  }

 private:
  struct Job {
    Job(std::int64_t c, const std::function<void(std::int64_t)>& b) : count(c), body(b) {}
    const std::int64_t count;
    const std::function<void(std::int64_t)>& body;  // the caller's, alive until every item is done
    std::atomic<std::int64_t> next{0};
    std::mutex mutex;
    std::condition_variable finished;
    std::int64_t done = 0;  // under mutex
    std::exception_ptr error;
  };

  // Items of job until none is left. A job whose items are all taken is never
  // touched past `next` (its body may be gone), only its shared state.
  static void work(Job& job) {
    for (;;) {
      const std::int64_t i = job.next.fetch_add(1, std::memory_order_relaxed);
      if (i >= job.count) return;
      std::exception_ptr error;
      try {
        job.body(i);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(job.mutex);
      if (error && !job.error) job.error = error;
      if (++job.done == job.count) job.finished.notify_all();
    }
  }

  void serve() {
    std::shared_ptr<Job> seen;
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || (job_ && job_ != seen); });
        if (stop_) return;
        job = job_;
      }
      seen = job;
      work(*job);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<Job> job_;  // the job being handed out, under mutex_
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace keig::stages::detail
