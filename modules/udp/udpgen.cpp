// efu-udpgen: sends sequence-numbered datagrams through the generators' shared sender
// (batched sendmmsg on an absolute pacing schedule).
#include <netdb.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "efu/errors.h"
#include "efu/gen/pacer.h"
#include "efu/gen/packet_sender.h"
#include "payload.h"
#include "udpgen_options.h"

namespace {

using Clock = std::chrono::steady_clock;
using efu::udp::UdpgenOptions;
namespace gen = efu::gen;

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

bool pin_to_cpu(int cpu) {
  if (cpu < 0) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= CPU_SETSIZE) return false;
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

Clock::time_point after(Clock::time_point t, double seconds) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The rate line on stderr every --stats-interval seconds (never when it is 0): the rates over
// the interval since the previous line.
class RateReport {
 public:
  RateReport(double interval_s, Clock::time_point start)
      : interval_s_(interval_s),
        start_(start),
        last_(start),
        next_(interval_s > 0 ? after(start, interval_s) : Clock::time_point::max()) {}

  void maybe_print(Clock::time_point now, const gen::PacketSender& sender) {
    if (now < next_) return;
    const double dt = seconds_between(last_, now);
    const double pps = static_cast<double>(sender.packets() - packets_) / dt;
    const double gbps = static_cast<double>(sender.bytes() - bytes_) * 8 / dt / 1e9;
    std::fprintf(stderr, "efu-udpgen: t=%.1f s rate=%.4f Gb/s %.0f pps packets=%llu\n",
                 seconds_between(start_, now), gbps, pps,
                 static_cast<unsigned long long>(sender.packets()));
    packets_ = sender.packets();
    bytes_ = sender.bytes();
    last_ = now;
    next_ = after(now, interval_s_);
  }

 private:
  double interval_s_;
  Clock::time_point start_;
  Clock::time_point last_;  // of the previous line
  Clock::time_point next_;
  std::uint64_t packets_ = 0;
  std::uint64_t bytes_ = 0;
};

// The sequence numbers in sending order: start + index, where index i is left out (never sent)
// when (i+1) % K == 0 for --skip-every K.
struct Numbering {
  std::uint64_t start;
  std::uint64_t skip_every;
  std::uint64_t next_index = 0;
  std::uint64_t skipped = 0;

  std::uint64_t next() {
    if (skip_every != 0 && (next_index + 1) % skip_every == 0) {
      ++skipped;
      ++next_index;
    }
    return start + next_index++;
  }
};

// Queues datagrams until --count, the --duration deadline, a signal or a send error; returns the
// sequence numbers skipped. A batch is filled, then the sender sends it when the schedule says
// its first datagram is due; the deadline and the rate line are checked once per batch.
std::uint64_t send_datagrams(const UdpgenOptions& o, const gen::Pacer& pacer,
                             gen::PacketSender& sender) {
  const Clock::time_point start = pacer.start();
  const Clock::time_point deadline =
      o.duration_s > 0 ? after(start, o.duration_s) : Clock::time_point::max();
  RateReport report(o.stats_interval_s, start);
  Numbering numbers{efu::udp::seq_start(o.format), o.skip_every};
  for (std::uint64_t queued = 0; !g_stop.load(std::memory_order_relaxed); ++queued) {
    if (o.count != 0 && queued >= o.count) break;
    if (queued % o.batch == 0) {
      const Clock::time_point now = Clock::now();
      if (pacer.due(sender.packets(), sender.bytes()) >= deadline || now >= deadline) break;
      report.maybe_print(now, sender);
    }
    const std::uint64_t seq = numbers.next();
    std::uint8_t* p = sender.buffer();
    efu::udp::write_seq(o.format, seq, p);
    efu::udp::write_filler(o.format, seq, p, o.size);
    if (!sender.commit(o.size)) break;
  }
  return numbers.skipped;
}

// One parseable summary line on stdout (scripts and tests read it).
void print_summary(const UdpgenOptions& o, const gen::PacketSender& sender, Clock::time_point start,
                   std::uint64_t skipped) {
  // Numbers that were queued but not sent (a signal mid-batch) count neither as sent nor skipped.
  const double elapsed = seconds_between(start, Clock::now());
  const std::uint64_t packets = sender.packets();
  const std::uint64_t bytes = sender.bytes();
  std::printf(
      "efu-udpgen: sent packets=%llu bytes=%llu skipped=%llu send_errors=%llu elapsed_s=%.6f "
      "gbps=%.6f pps=%.1f size=%u format=%s messages=%llu source_port=%u\n",
      static_cast<unsigned long long>(packets), static_cast<unsigned long long>(bytes),
      static_cast<unsigned long long>(skipped),
      static_cast<unsigned long long>(sender.send_errors()), elapsed,
      elapsed > 0 ? static_cast<double>(bytes) * 8 / elapsed / 1e9 : 0.0,
      elapsed > 0 ? static_cast<double>(packets) / elapsed : 0.0, o.size,
      efu::udp::seq_format_name(o.format), static_cast<unsigned long long>(sender.messages()),
      static_cast<unsigned>(sender.local_port()));
  std::fflush(stdout);
}

gen::SenderSettings sender_settings(const UdpgenOptions& o) {
  gen::SenderSettings settings;
  settings.program = "efu-udpgen";
  settings.host = o.host;
  settings.port = o.port;
  settings.sndbuf = o.sndbuf;
  settings.batch = o.batch;
  settings.max_size = o.size;
  settings.gso = o.gso;
  return settings;
}

int run(const UdpgenOptions& o) {
  gen::Pacer pacer(gen::Rate{o.pps, 0});
  std::optional<gen::PacketSender> sender;
  try {
    sender.emplace(sender_settings(o), pacer, &g_stop);
  } catch (const efu::ConfigError& e) {
    std::fprintf(stderr, "efu-udpgen: %s\n", e.what());
    return efu::kExitConfigError;
  }
  if (!pin_to_cpu(o.cpu)) {
    std::fprintf(stderr,
                 "efu-udpgen: --cpu: '%d' cannot be used; expected a core of this machine "
                 "(0..%ld)\n",
                 o.cpu, sysconf(_SC_NPROCESSORS_ONLN) - 1);
    return efu::kExitConfigError;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  pacer.restart();
  const std::uint64_t skipped = send_datagrams(o, pacer, *sender);
  int exit_code = 0;
  if (sender->error().empty() && !g_stop.load(std::memory_order_relaxed)) sender->flush();
  if (!sender->error().empty()) {
    std::fprintf(stderr, "efu-udpgen: %s\n", sender->error().c_str());
    exit_code = 1;
  }
  print_summary(o, *sender, pacer.start(), skipped);
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const efu::udp::UdpgenParse parsed = efu::udp::parse_udpgen_options(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  return run(*parsed.options);
}
