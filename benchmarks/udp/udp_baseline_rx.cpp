// udp-baseline-rx: the least a receiver can do (recvmmsg into preallocated buffers, count) — the
// baseline that efu --module udp is measured against in the same run.
//
//   udp-baseline-rx --port N [--bind ADDR] [--packets N] [--seconds S] [--batch 64]
//                   [--size-max 9000] [--rcvbuf BYTES] [--idle-exit S]
//
// Ends after N packets, after S seconds, or after --idle-exit seconds without data once the
// first packet arrived. Prints one line: packets, bytes, elapsed and the CPU time of its own
// thread (user, system) from getrusage(RUSAGE_THREAD).
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Args {
  std::string bind = "127.0.0.1";
  std::string port;
  std::uint64_t packets = 0;
  double seconds = 60;
  unsigned batch = 64;
  unsigned size_max = 9000;
  int rcvbuf = 12'000'000;
  double idle_exit = 2;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "udp-baseline-rx: %s\n", message.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view key = argv[i];
    if (i + 1 >= argc) usage_error(std::string(key) + ": expected a value after it");
    const char* value = argv[++i];
    char* end = nullptr;
    if (key == "--bind") {
      a.bind = value;
    } else if (key == "--port") {
      a.port = value;
    } else if (key == "--packets") {
      a.packets = std::strtoull(value, &end, 10);
    } else if (key == "--seconds") {
      a.seconds = std::strtod(value, &end);
    } else if (key == "--batch") {
      a.batch = static_cast<unsigned>(std::strtoul(value, &end, 10));
    } else if (key == "--size-max") {
      a.size_max = static_cast<unsigned>(std::strtoul(value, &end, 10));
    } else if (key == "--rcvbuf") {
      a.rcvbuf = static_cast<int>(std::strtol(value, &end, 10));
    } else if (key == "--idle-exit") {
      a.idle_exit = std::strtod(value, &end);
    } else {
      usage_error("unknown option '" + std::string(key) + "'");
    }
    if (end != nullptr && *end != '\0') {
      usage_error(std::string(key) + ": '" + value + "' is not a number");
    }
  }
  if (a.port.empty()) usage_error("--port is required");
  if (a.batch < 1 || a.batch > 1024) usage_error("--batch: expected 1..1024");
  return a;
}

double thread_cpu_s(double* user, double* system) {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  *user = static_cast<double>(u.ru_utime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec) * 1e-6;
  *system = static_cast<double>(u.ru_stime.tv_sec) + static_cast<double>(u.ru_stime.tv_usec) * 1e-6;
  return *user + *system;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(a.bind.c_str(), a.port.c_str(), &hints, &found) != 0) {
    usage_error("--bind/--port: '" + a.bind + "' port '" + a.port + "' is not a numeric address");
  }
  const int fd = socket(found->ai_family, SOCK_DGRAM, 0);
  // Plain SO_RCVBUF, capped by net.core.rmem_max, exactly as the efu host asks for its buffer:
  // both receivers must get the same buffer for the comparison to be fair.
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &a.rcvbuf, sizeof a.rcvbuf);
  if (bind(fd, found->ai_addr, found->ai_addrlen) != 0) {
    std::fprintf(stderr, "udp-baseline-rx: bind %s:%s: %s\n", a.bind.c_str(), a.port.c_str(),
                 std::strerror(errno));
    return 2;
  }
  freeaddrinfo(found);
  const timeval wake{0, 100'000};  // 100 ms: re-check the deadlines while idle
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wake, sizeof wake);

  std::vector<std::uint8_t> buffers(static_cast<std::size_t>(a.batch) * a.size_max);
  std::vector<iovec> iov(a.batch);
  std::vector<mmsghdr> msgs(a.batch);
  for (unsigned i = 0; i < a.batch; ++i) {
    iov[i] = {buffers.data() + static_cast<std::size_t>(i) * a.size_max, a.size_max};
    msgs[i] = {};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  std::printf("udp-baseline-rx: ready port=%s\n", a.port.c_str());
  std::fflush(stdout);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(a.seconds);
  Clock::time_point first{};
  Clock::time_point last = start;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  while (a.packets == 0 || packets < a.packets) {
    const auto now = Clock::now();
    if (now >= deadline) break;
    if (packets != 0 && now - last > std::chrono::duration<double>(a.idle_exit)) break;
    // Blocks for the first datagram (up to SO_RCVTIMEO), then takes what is queued.
    const int n = recvmmsg(fd, msgs.data(), a.batch, MSG_WAITFORONE, nullptr);
    if (n <= 0) continue;
    last = Clock::now();
    if (packets == 0) first = last;
    packets += static_cast<std::uint64_t>(n);
    for (int i = 0; i < n; ++i) bytes += msgs[i].msg_len;
  }
  double user = 0;
  double system = 0;
  thread_cpu_s(&user, &system);
  const double active = packets != 0 ? std::chrono::duration<double>(last - first).count() : 0;
  std::printf(
      "udp-baseline-rx: packets=%llu bytes=%llu active_s=%.6f cpu_user_s=%.6f "
      "cpu_sys_s=%.6f\n",
      static_cast<unsigned long long>(packets), static_cast<unsigned long long>(bytes), active,
      user, system);
  close(fd);
  return 0;
}
