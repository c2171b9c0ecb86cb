// wakeup_cost: what one sleep and wake-up of a processing thread costs on this host, with efu's
// own Wakeup (efu/process/wakeup.h). The adaptive wait policy (efu/process/processor.cpp, docs/host.md "Waiting
// for packets") spins through a gap between packets only when the gap is shorter than this cost;
// this program measures the figure its threshold rests on.
//
// A producer thread publishes one item every --period-us (an atomic sequence number, then
// Wakeup::notify(), as a receive thread does after a push) and a consumer thread waits for each
// with Wakeup::sleep() and nothing else, so:
//  - consumer CPU per cycle (CLOCK_THREAD_CPUTIME_ID over the run / cycles) is what a sleep and
//    a wake-up cost the sleeping thread: the futex_wait syscall, being switched out and in;
//  - producer CPU per wake is the CPU time of the notify() calls that found the consumer asleep
//    (FUTEX_WAKE and the wake-up of the other thread), less the cost of reading the CPU clock;
//  - wake latency is from just before notify() to the consumer running again (median, p99): how
//    late a sleeping thread sees a packet;
//  - notify() while the consumer is awake (spinning) is the read-modify-write alone.
// The producer waits for each period with clock_nanosleep (as a receive thread blocks in
// recvmmsg), so both cores may go idle between items, as they do at low packet rates.
//
//   wakeup_cost [--period-us N] [--cycles N] [--producer-cpu A] [--consumer-cpu B]
// Same core for both (A == B) is how efu runs when receive and processing threads share a core.
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "process/wakeup.h"

namespace {

std::uint64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

void pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    std::fprintf(stderr, "wakeup_cost: cannot pin to core %d\n", cpu);
    std::exit(2);
  }
}

struct Options {
  std::uint64_t period_ns = 50'000;
  std::uint64_t cycles = 20'000;
  int producer_cpu = 1;
  int consumer_cpu = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (name == "--period-us" && v > 0) {
      o.period_ns = static_cast<std::uint64_t>(v) * 1000;
    } else if (name == "--cycles" && v > 0 && v <= 10'000'000) {
      o.cycles = static_cast<std::uint64_t>(v);
    } else if (name == "--producer-cpu") {
      o.producer_cpu = static_cast<int>(v);
    } else if (name == "--consumer-cpu") {
      o.consumer_cpu = static_cast<int>(v);
    } else {
      std::fprintf(stderr,
                   "wakeup_cost: '%s %s' is not valid; expected --period-us N>0, "
                   "--cycles 1..10000000, --producer-cpu N, --consumer-cpu N\n",
                   argv[i], argv[i + 1]);
      std::exit(2);
    }
  }
  return o;
}

// The cost of one pair of CLOCK_THREAD_CPUTIME_ID reads (a syscall each, no vDSO for it).
std::uint64_t cpu_clock_pair_ns() {
  constexpr int kReps = 2000;
  const std::uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
  for (int i = 0; i < kReps; ++i) {
    clock_ns(CLOCK_THREAD_CPUTIME_ID);
    clock_ns(CLOCK_THREAD_CPUTIME_ID);
  }
  return (clock_ns(CLOCK_MONOTONIC) - t0) / kReps;
}

// notify() with nobody asleep: the read-modify-write every push pays.
double awake_notify_ns() {
  efu::Wakeup w;
  constexpr int kReps = 1'000'000;
  const std::uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
  for (int i = 0; i < kReps; ++i) w.notify();
  return static_cast<double>(clock_ns(CLOCK_MONOTONIC) - t0) / kReps;
}

struct Shared {
  efu::Wakeup wakeup;
  alignas(64) std::atomic<std::uint64_t> seq{0};
  std::atomic<std::uint64_t> stamp{0};  // CLOCK_MONOTONIC just before the notify() of seq
  std::atomic<bool> done{false};
};

struct ConsumerResult {
  std::uint64_t cpu_ns = 0;
  std::uint64_t cycles = 0;
  std::vector<std::uint64_t> latency_ns;
};

ConsumerResult consume(Shared& s, const Options& o) {
  pin(o.consumer_cpu);
  ConsumerResult r;
  r.latency_ns.reserve(o.cycles);
  std::uint64_t seen = 0;
  const std::uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  while (!s.done.load(std::memory_order_acquire)) {
    s.wakeup.sleep(100'000'000, [&] {
      return s.seq.load(std::memory_order_acquire) != seen ||
             s.done.load(std::memory_order_acquire);
    });
    const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
    const std::uint64_t seq = s.seq.load(std::memory_order_acquire);
    if (seq == seen) continue;  // timed out, or the run is over
    const std::uint64_t stamp = s.stamp.load(std::memory_order_relaxed);
    if (seq == seen + 1 && now >= stamp) r.latency_ns.push_back(now - stamp);
    seen = seq;
    ++r.cycles;
  }
  r.cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  return r;
}

struct ProducerResult {
  std::uint64_t notify_cpu_ns = 0;
  std::uint64_t wakes = 0;
};

ProducerResult produce(Shared& s, const Options& o) {
  pin(o.producer_cpu);
  ProducerResult r;
  timespec next{};
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (std::uint64_t i = 1; i <= o.cycles; ++i) {
    next.tv_nsec += static_cast<long>(o.period_ns);
    while (next.tv_nsec >= 1'000'000'000) {
      next.tv_nsec -= 1'000'000'000;
      ++next.tv_sec;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) != 0) {
    }
    const std::uint64_t wakes_before = s.wakeup.wakes();
    s.stamp.store(clock_ns(CLOCK_MONOTONIC), std::memory_order_relaxed);
    s.seq.store(i, std::memory_order_release);
    const std::uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    s.wakeup.notify();
    const std::uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (s.wakeup.wakes() != wakes_before) {
      r.notify_cpu_ns += c1 - c0;
      ++r.wakes;
    }
  }
  s.done.store(true, std::memory_order_release);
  s.wakeup.notify();
  return r;
}

std::uint64_t percentile(std::vector<std::uint64_t>& v, double p) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const double awake = awake_notify_ns();
  const std::uint64_t clock_pair = cpu_clock_pair_ns();
  Shared shared;
  ConsumerResult c;
  std::thread consumer([&] { c = consume(shared, o); });
  // Let the consumer reach its first sleep.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const ProducerResult p = produce(shared, o);
  consumer.join();
  const double wakes = static_cast<double>(std::max<std::uint64_t>(p.wakes, 1));
  const double producer_ns =
      std::max(0.0, static_cast<double>(p.notify_cpu_ns) / wakes - static_cast<double>(clock_pair));
  const double consumer_ns =
      static_cast<double>(c.cpu_ns) / static_cast<double>(std::max<std::uint64_t>(c.cycles, 1));
  const std::uint64_t p50 = percentile(c.latency_ns, 0.5);
  const std::uint64_t p99 = percentile(c.latency_ns, 0.99);
  std::printf(
      "wakeup_cost: period_us=%.1f producer_cpu=%d consumer_cpu=%d cycles=%llu wakes=%llu\n"
      "  notify_awake_ns=%.1f\n"
      "  consumer_cpu_ns_per_cycle=%.0f producer_cpu_ns_per_wake=%.0f sum_ns=%.0f\n"
      "  wake_latency_ns p50=%llu p99=%llu\n",
      static_cast<double>(o.period_ns) / 1000, o.producer_cpu, o.consumer_cpu,
      static_cast<unsigned long long>(c.cycles), static_cast<unsigned long long>(p.wakes), awake,
      consumer_ns, producer_ns, consumer_ns + producer_ns, static_cast<unsigned long long>(p50),
      static_cast<unsigned long long>(p99));
  return c.cycles == o.cycles ? 0 : 1;
}
