// thread_pool.cpp — see thread_pool.h. A job is a range of task indices claimed one at a time
// through an atomic counter by the caller and by helper workers; helpers join while the job
// has free slots, and the caller waits only for the helpers that joined.
#include "runtime/thread_pool.h"

#include <atomic>
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
  int active = 0;      // helpers working on it (guarded by the pool mutex)

  void work() {
    for (int i = next.fetch_add(1); i < extent; i = next.fetch_add(1)) {
      int s = task(user_context, min + i, closure);
      if (s != 0) status.store(s);
    }
  }
};

class Pool {
 public:
  static Pool& get() {
    static Pool* pool = new Pool();  // never destroyed: workers may outlive static destructors
    return *pool;
  }

  int run(int threads, Job& job) {
    int helpers = std::min(threads, job.extent) - 1;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!grow(helpers)) return kThreadStartFailed;
      job.free_slots = helpers;
      if (helpers > 0) queue_.push_back(&job);
    }
    cv_.notify_all();
    in_task = true;
    job.work();
    in_task = false;
    std::unique_lock<std::mutex> lock(mu_);
    if (job.free_slots > 0) remove(&job);
    done_.wait(lock, [&] { return job.active == 0; });
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

  void loop() {
    in_task = true;  // a loop started from a task runs serially
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return !queue_.empty(); });
      Job* job = queue_.front();
      if (--job->free_slots == 0) queue_.pop_front();
      ++job->active;
      lock.unlock();
      job->work();
      lock.lock();
      if (--job->active == 0) done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_, done_;
  std::deque<Job*> queue_;
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
