// test_thread_pool.cpp — the parallel loops' pool (runtime/thread_pool.h): every index run once,
// a failing task's status returned, and a worker woken from sleep never sharing its caller's CPU.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "runtime/thread_pool.h"

namespace {

struct Counts {
  std::vector<std::atomic<int>> runs = std::vector<std::atomic<int>>(1000);
};

int count_run(void*, int i, uint8_t* closure) {
  reinterpret_cast<Counts*>(closure)->runs[static_cast<size_t>(i)].fetch_add(1);
  return 0;
}

int fail_at_7(void*, int i, uint8_t*) { return i == 7 ? 42 : 0; }

TEST(ThreadPool, RunsEveryIndexOnce) {
  for (int threads : {1, 2, 3, 8}) {
    Counts c;
    ASSERT_EQ(tc::runtime::parallel_for(threads, count_run, nullptr, 100, 900, reinterpret_cast<uint8_t*>(&c)), 0);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(c.runs[static_cast<size_t>(i)].load(), i >= 100 ? 1 : 0) << i;
  }
}

TEST(ThreadPool, ReturnsAFailingTasksStatus) {
  EXPECT_EQ(tc::runtime::parallel_for(2, fail_at_7, nullptr, 0, 16, nullptr), 42);
}

// Two tasks: the caller's waits (up to 2 s) until the helper's has recorded its CPU, so both run
// at once; the helper's CPU is then one the caller is not on.
struct Meeting {
  std::atomic<int> helper_cpu{-1};
  std::atomic<bool> met{false};
  int caller_cpu = -1;
  std::thread::id caller;
};

int meet(void*, int, uint8_t* closure) {
  auto& m = *reinterpret_cast<Meeting*>(closure);
  if (std::this_thread::get_id() != m.caller) {
    m.helper_cpu.store(sched_getcpu());
    m.met.store(true);
    return 0;
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!m.met.load() && std::chrono::steady_clock::now() < until) {
  }
  return 0;
}

TEST(ThreadPool, AWokenWorkerLeavesItsCallersCpu) {
  cpu_set_t allowed;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "one CPU: nowhere to move";
  Counts c;  // the worker started before the caller is pinned (a new thread takes its creator's CPUs)
  ASSERT_EQ(tc::runtime::parallel_for(2, count_run, nullptr, 0, 1000, reinterpret_cast<uint8_t*>(&c)), 0);
  int first = 0;
  while (!CPU_ISSET(first, &allowed)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);  // the caller on `first`
  int shared = 0, met = 0;
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the worker's spin over: asleep
    Meeting m;
    m.caller = std::this_thread::get_id();
    m.caller_cpu = sched_getcpu();
    ASSERT_EQ(tc::runtime::parallel_for(2, meet, nullptr, 0, 2, reinterpret_cast<uint8_t*>(&m)), 0);
    if (!m.met.load()) continue;  // the caller ran both tasks (the helper came late)
    ++met;
    shared += m.helper_cpu.load() == m.caller_cpu;
  }
  pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
  EXPECT_GT(met, 0);
  EXPECT_EQ(shared, 0) << "of " << met << " rounds where both tasks ran at once";
}

}  // namespace
