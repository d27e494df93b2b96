// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/detail/pool.hpp -- the worker threads that run blocks. Created once, grown on demand.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace strata::emulator::detail {

/// Runs fn(0..workers-1) concurrently: fn(0) on the calling thread, the others on pooled threads,
/// and returns when all have returned. One launch at a time (launches from several host threads are
/// serialized), which keeps each worker's fiber cache private to it.
class worker_pool {
 public:
  static worker_pool& instance() {
    static worker_pool p;
    return p;
  }

  void run(int workers, const std::function<void(int)>& fn) {
    std::lock_guard<std::mutex> serial(launch_mutex_);
    {
      std::unique_lock<std::mutex> lk(m_);
      while (static_cast<int>(threads_.size()) < workers - 1) {
        const int id = static_cast<int>(threads_.size()) + 1;
        threads_.emplace_back([this, id] { loop(id); });
      }
      job_ = &fn;
      job_workers_ = workers;
      pending_ = workers - 1;
      ++generation_;
    }
    cv_.notify_all();
    fn(0);
    std::unique_lock<std::mutex> lk(m_);
    done_.wait(lk, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

  ~worker_pool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
      ++generation_;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  worker_pool() = default;

  void loop(int id) {
    unsigned long long seen = 0;
    for (;;) {
      const std::function<void(int)>* job = nullptr;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (id >= job_workers_) continue;
        job = job_;
      }
      (*job)(id);
      {
        std::lock_guard<std::mutex> lk(m_);
        --pending_;
      }
      done_.notify_all();
    }
  }

  std::mutex launch_mutex_;
  std::mutex m_;
  std::condition_variable cv_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* job_ = nullptr;
  int job_workers_ = 0;
  int pending_ = 0;
  unsigned long long generation_ = 0;
  bool stop_ = false;
};

}  // namespace strata::emulator::detail
