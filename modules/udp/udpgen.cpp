// efu-udpgen: sends sequence-numbered datagrams with sendmmsg, paced by a busy-waited clock.
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
#include <string>
#include <vector>

#include "efu/errors.h"
#include "payload.h"
#include "udpgen_options.h"

namespace {

using Clock = std::chrono::steady_clock;
using efu::udp::UdpgenOptions;

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// Resolves and connects; returns the socket or -1 after printing a one-line error.
int open_socket(const UdpgenOptions& o) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(o.port);
  if (const int rc = getaddrinfo(o.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    std::fprintf(stderr,
                 "efu-udpgen: --host: '%s' does not resolve (%s); expected a host name or "
                 "IPv4/IPv6 address\n",
                 o.host.c_str(), gai_strerror(rc));
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    // Connected: the kernel skips the per-datagram route lookup.
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) {
    std::fprintf(stderr, "efu-udpgen: --host: cannot send to '%s' port %u (%s)\n", o.host.c_str(),
                 static_cast<unsigned>(o.port), std::strerror(errno));
    return -1;
  }
  if (o.sndbuf > 0) {
    // SO_SNDBUFFORCE passes net.core.wmem_max when privileged; otherwise the capped request.
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &o.sndbuf, sizeof o.sndbuf) != 0) {
      setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o.sndbuf, sizeof o.sndbuf);
    }
    int actual = 0;
    socklen_t len = sizeof actual;
    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &actual, &len);
    if (actual / 2 < o.sndbuf) {  // the kernel reports twice the usable size
      std::fprintf(stderr, "efu-udpgen: warning: --sndbuf %d capped to %d by net.core.wmem_max\n",
                   o.sndbuf, actual / 2);
    }
  }
  return fd;
}

bool pin_to_cpu(int cpu) {
  if (cpu < 0) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= CPU_SETSIZE) return false;
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

struct Totals {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t skipped = 0;
  std::uint64_t send_errors = 0;  // failed sendmmsg calls that were retried (e.g. ECONNREFUSED)
  std::uint64_t next_index = 0;   // index of the next sequence number (seq = start + index)
};

int run(const UdpgenOptions& o) {
  const int fd = open_socket(o);
  if (fd < 0) return efu::kExitConfigError;
  if (!pin_to_cpu(o.cpu)) {
    std::fprintf(stderr,
                 "efu-udpgen: --cpu: '%d' cannot be used; expected a core of this machine "
                 "(0..%ld)\n",
                 o.cpu, sysconf(_SC_NPROCESSORS_ONLN) - 1);
    close(fd);
    return efu::kExitConfigError;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  // Everything the loop touches is allocated here.
  std::vector<std::uint8_t> buffers(static_cast<std::size_t>(o.batch) * o.size);
  std::vector<iovec> iov(o.batch);
  std::vector<mmsghdr> msgs(o.batch);
  for (std::uint32_t i = 0; i < o.batch; ++i) {
    iov[i] = {buffers.data() + static_cast<std::size_t>(i) * o.size, o.size};
    msgs[i] = {};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }

  const std::uint64_t start_seq = efu::udp::seq_start(o.format);
  const double ns_per_packet = o.pps > 0 ? 1e9 / o.pps : 0;
  Totals t;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = o.duration_s > 0
                                         ? start + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(o.duration_s))
                                         : Clock::time_point::max();
  Clock::time_point next_report =
      o.stats_interval_s > 0 ? start + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.stats_interval_s))
                             : Clock::time_point::max();
  std::uint64_t report_packets = 0;
  std::uint64_t report_bytes = 0;
  Clock::time_point report_start = start;
  int exit_code = 0;

  while (!g_stop.load(std::memory_order_relaxed)) {
    std::uint64_t n = o.batch;
    if (o.count != 0) {
      if (t.packets >= o.count) break;
      n = std::min<std::uint64_t>(n, o.count - t.packets);
    }
    // Pace: this batch may leave once the schedule says its first datagram is due.
    Clock::time_point now = Clock::now();
    if (ns_per_packet > 0) {
      const auto due =
          start + std::chrono::nanoseconds(static_cast<std::int64_t>(t.packets * ns_per_packet));
      while (now < due && !g_stop.load(std::memory_order_relaxed)) now = Clock::now();
    }
    if (now >= deadline) break;
    // Fill the batch. Skipped numbers are never sent: index i is left out when (i+1) % K == 0.
    for (std::uint64_t i = 0; i < n; ++i) {
      if (o.skip_every != 0 && (t.next_index + 1) % o.skip_every == 0) {
        ++t.skipped;
        ++t.next_index;
      }
      const std::uint64_t seq = start_seq + t.next_index++;
      std::uint8_t* p = buffers.data() + i * o.size;
      efu::udp::write_seq(o.format, seq, p);
      efu::udp::write_filler(o.format, seq, p, o.size);
    }
    std::uint64_t done = 0;
    while (done < n) {
      const int sent = sendmmsg(fd, msgs.data() + done, static_cast<unsigned>(n - done), 0);
      if (sent < 0) {
        if (errno == EINTR && g_stop.load(std::memory_order_relaxed)) break;
        if (errno == EINTR || errno == ECONNREFUSED || errno == ENOBUFS || errno == EAGAIN) {
          // ECONNREFUSED reports an ICMP error of an earlier datagram; this one was not sent.
          ++t.send_errors;
          continue;
        }
        std::fprintf(stderr, "efu-udpgen: sendmmsg failed: %s\n", std::strerror(errno));
        exit_code = 1;
        break;
      }
      done += static_cast<std::uint64_t>(sent);
    }
    t.packets += done;
    t.bytes += done * o.size;
    if (done < n) {
      // Stopped mid-batch: unsent numbers are not counted (only possible on a signal or error).
      break;
    }
    if (exit_code != 0) break;
    if (now >= next_report) {
      const double dt = seconds_between(report_start, now);
      const double pps = static_cast<double>(t.packets - report_packets) / dt;
      const double gbps = static_cast<double>(t.bytes - report_bytes) * 8 / dt / 1e9;
      std::fprintf(stderr, "efu-udpgen: t=%.1f s rate=%.4f Gb/s %.0f pps packets=%llu\n",
                   seconds_between(start, now), gbps, pps,
                   static_cast<unsigned long long>(t.packets));
      report_packets = t.packets;
      report_bytes = t.bytes;
      report_start = now;
      next_report = now + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(o.stats_interval_s));
    }
  }
  const double elapsed = seconds_between(start, Clock::now());
  close(fd);
  // One parseable summary line on stdout (scripts and tests read it).
  std::printf(
      "efu-udpgen: sent packets=%llu bytes=%llu skipped=%llu send_errors=%llu elapsed_s=%.6f "
      "gbps=%.6f pps=%.1f size=%u format=%s\n",
      static_cast<unsigned long long>(t.packets), static_cast<unsigned long long>(t.bytes),
      static_cast<unsigned long long>(t.skipped), static_cast<unsigned long long>(t.send_errors),
      elapsed, elapsed > 0 ? static_cast<double>(t.bytes) * 8 / elapsed / 1e9 : 0.0,
      elapsed > 0 ? static_cast<double>(t.packets) / elapsed : 0.0, o.size,
      efu::udp::seq_format_name(o.format));
  std::fflush(stdout);
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const efu::udp::UdpgenParse parsed = efu::udp::parse_udpgen_options(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  return run(*parsed.options);
}
