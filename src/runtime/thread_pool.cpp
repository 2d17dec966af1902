// thread_pool.cpp — see thread_pool.h. A job is a range of task indices claimed in chunks of
// consecutive indices through an atomic counter by the caller and by helper workers; helpers join while the job
// has free slots, and the caller waits only for the helpers that joined. An idle worker spins
// for kSpin before it sleeps, so that back-to-back parallel loops (a kernel's stages, a
// framework's calls) find it running on its own core instead of waking it. A worker woken
// onto the CPU its caller runs on moves off it (move_off_cpu).
#include "runtime/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tc::runtime {
namespace {

thread_local bool in_task = false;
thread_local std::string start_failure;

struct Job {
  Task task;
  void* user_context;
  uint8_t* closure;
  int min, extent;
  std::atomic<int> next{0};
  std::atomic<int> status{0};
  int free_slots = 0;  // helpers still wanted (guarded by the pool mutex)
  // Helpers working on it: changed under the pool mutex, read without it by the caller's
  // spin (wait_for_helpers); a helper's decrement is its last access to the job.
  std::atomic<int> active{0};

  int chunk = 1;  // consecutive indices claimed at once (see kChunksPerThread)
  int caller_cpu = -1;  // where the caller started it (-1: unknown)

  void work() {
    for (int first = next.fetch_add(chunk); first < extent; first = next.fetch_add(chunk))
      for (int i = first; i < extent && i < first + chunk; ++i) {
        int s = task(user_context, min + i, closure);
        if (s != 0) status.store(s);
      }
  }
};

// A thread claims consecutive indices, about 1/kChunksPerThread of its share at a time, not
// one: neighbouring tasks read neighbouring data (a convolution's output rows share input
// rows), which then stays in one core's caches, and the shared counter is touched less.
// Measured with 2 threads: tbmm 0.61-0.67 -> 0.52-0.57 ms, maxpool 1.18-1.61 -> 0.95-1.0 ms
// (chunks of 1 index against 4 to 16 chunks per thread); enough chunks remain to balance
// threads that start late.
constexpr int kChunksPerThread = 8;

// How long an idle worker polls for a job before it sleeps. A sleeping worker is woken late
// (on a VM, waking an idle virtual CPU is slow), and for a short loop the caller has done most
// of the work by then: on a 2-core VM softmax 128x1000 with 2 threads took 0.062 or 0.080 ms
// depending on the process, and 0.044 ms in every one of 5 processes with workers spinning.
// This is what OpenMP runtimes and OpenBLAS do too; the cost is at most this much CPU time
// per worker after the last loop.
constexpr std::chrono::microseconds kSpin{200};

// Moves the calling thread off `cpu` now, to another CPU it may run on, and allows it every CPU
// it was allowed again (the scheduler then leaves it where it is). A worker asleep for a while
// (its spin over) is often woken onto the CPU of the caller that woke it, since on a VM the
// other, idle, virtual CPU does not count as free; the two then share that CPU until the
// scheduler's balancing moves one, milliseconds later: on a 2-core VM, sgemm 1024³ after 0.25 s
// idle took 12-16 ms instead of 8 in 6 of 10 calls, both threads starting on one CPU.
void move_off_cpu(int cpu) {
  cpu_set_t allowed, others;
  if (pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) != 0 || !CPU_ISSET(cpu, &allowed)) return;
  others = allowed;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0 || pthread_setaffinity_np(pthread_self(), sizeof others, &others) != 0) return;
  pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls `done` for up to kSpin (the clock read every 64 rounds); whether it came true.
template <typename Predicate>
bool poll_until(Predicate done) {
  auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0; !done(); ++i) {
    cpu_relax();
    if (i % 64 == 63 && std::chrono::steady_clock::now() > until) return done();
  }
  return true;
}

class Pool {
 public:
  static Pool& get() {
    static Pool* pool = new Pool();  // never destroyed: workers may outlive static destructors
    return *pool;
  }

  int run(int threads, Job& job) {
    int helpers = std::min(threads, job.extent) - 1;
    bool woke = false;
    job.chunk = std::max(1, job.extent / (threads * kChunksPerThread));
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!grow(helpers)) return kThreadStartFailed;
      job.free_slots = helpers;
      job.caller_cpu = sched_getcpu();
      if (helpers > 0) queue_.push_back(&job);
      queued_.store(!queue_.empty(), std::memory_order_release);
      woke = helpers > 0 && asleep_ > 0;
    }
    cv_.notify_all();
    // A worker woken onto this CPU runs now and moves off it (move_off_cpu), rather than waiting
    // for this thread's time slice to end.
    if (woke) sched_yield();
    in_task = true;
    job.work();
    in_task = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (job.free_slots > 0) remove(&job);  // no helper joins from now on
      queued_.store(!queue_.empty(), std::memory_order_release);
    }
    wait_for_helpers(job);
    return job.status.load();
  }

 private:
  // Starts workers until there are `helpers`; false (and start_failure says why) if the
  // system refuses one. Those already started stay for later jobs.
  bool grow(int helpers) {
    while (static_cast<int>(workers_.size()) < helpers) {
      try {
        std::thread worker([this] { loop(); });
        worker.detach();
        workers_.push_back(std::move(worker));
      } catch (const std::exception& e) {
        start_failure = "thread " + std::to_string(workers_.size() + 1) + " of " + std::to_string(helpers) + ": " + e.what();
        return false;
      }
    }
    return true;
  }

  void remove(Job* job) {
    for (auto it = queue_.begin(); it != queue_.end(); ++it)
      if (*it == job) {
        queue_.erase(it);
        return;
      }
  }

  // The caller's wait for the helpers that joined: polled for up to kSpin, then asleep. Helpers
  // usually finish within microseconds of the caller, and sleeping on the condition variable
  // costs two futex calls and a wake-up that a VM delivers late (lut1 with 2 threads made
  // about 2 futex calls per tc_run).
  void wait_for_helpers(Job& job) {
    auto finished = [&] { return job.active.load(std::memory_order_acquire) == 0; };
    if (poll_until(finished)) return;
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, finished);
  }

  void loop() {
    in_task = true;  // a loop started from a task runs serially
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (queue_.empty()) {  // poll for a job without the lock before sleeping
        lock.unlock();
        poll_until([&] { return queued_.load(std::memory_order_acquire); });
        lock.lock();
      }
      ++asleep_;
      cv_.wait(lock, [&] { return !queue_.empty(); });
      --asleep_;
      Job* job = queue_.front();
      if (--job->free_slots == 0) queue_.pop_front();
      queued_.store(!queue_.empty(), std::memory_order_release);
      job->active.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      if (job->caller_cpu >= 0 && sched_getcpu() == job->caller_cpu) move_off_cpu(job->caller_cpu);
      job->work();
      lock.lock();
      if (job->active.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_, done_;
  std::deque<Job*> queue_;
  std::atomic<bool> queued_{false};  // !queue_.empty(), readable without the lock
  int asleep_ = 0;                    // workers waiting on cv_ (guarded by mu_)
  std::vector<std::thread> workers_;
};

}  // namespace

int parallel_for(int threads, Task task, void* user_context, int min, int extent, uint8_t* closure) {
  if (threads <= 1 || extent <= 1 || in_task) {
    for (int i = min; i < min + extent; ++i)
      if (int s = task(user_context, i, closure)) return s;
    return 0;
  }
  Job job;
  job.task = task;
  job.user_context = user_context;
  job.closure = closure;
  job.min = min;
  job.extent = extent;
  try {
    return Pool::get().run(threads, job);
  } catch (const std::exception& e) {  // a mutex or condition variable the system refused
    start_failure = e.what();
    return kThreadStartFailed;
  }
}

const std::string& thread_start_failure() { return start_failure; }

}  // namespace tc::runtime
