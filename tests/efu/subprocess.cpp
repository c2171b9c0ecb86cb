#include "subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace efu::test {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Child::Child(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
  char out_name[] = "/tmp/efu-child-out-XXXXXX";
  char err_name[] = "/tmp/efu-child-err-XXXXXX";
  const int out_fd = mkstemp(out_name);
  const int err_fd = mkstemp(err_name);
  out_path_ = out_name;
  err_path_ = err_name;
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    for (const std::string& e : extra_env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out_fd);
  close(err_fd);
}

Child::~Child() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  unlink(out_path_.c_str());
  unlink(err_path_.c_str());
}

std::optional<int> Child::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return -WTERMSIG(status);
      return -1000;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Child::signal(int sig) { kill(pid_, sig); }
std::string Child::out() const { return read_text(out_path_); }
std::string Child::err() const { return read_text(err_path_); }

bool Child::wait_for_stderr(const std::string& text, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (err().find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int free_udp_port() {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

void send_sequence(int port, std::uint64_t first, std::uint64_t count, std::size_t size) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string buf(size, '\x5a');
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t seq = first + i;
    std::memcpy(buf.data(), &seq, std::min(size, sizeof(seq)));
    sendto(fd, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    if (i % 200 == 199) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  close(fd);
}

namespace {
sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}
}  // namespace

int udp_sender_socket() {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a = loopback(0);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  return fd;
}

void send_one(int fd, int port, std::uint64_t seq, std::size_t size) {
  std::string buf(size, '\x5a');
  std::memcpy(buf.data(), &seq, std::min(size, sizeof(seq)));
  const sockaddr_in a = loopback(port);
  sendto(fd, buf.data(), buf.size(), 0, reinterpret_cast<const sockaddr*>(&a), sizeof(a));
}

void send_from_flows(int port, int senders, std::uint64_t each, std::size_t size,
                     std::uint64_t pause_every) {
  std::vector<int> fds;
  for (int s = 0; s < senders; ++s) fds.push_back(udp_sender_socket());
  for (std::uint64_t i = 0; i < each; ++i) {
    for (const int fd : fds) send_one(fd, port, i, size);
    if (i % pause_every == pause_every - 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  for (const int fd : fds) close(fd);
}

void send_gso(int fd, int port, std::uint64_t first, unsigned count, std::size_t size,
              std::size_t last_size) {
  if (last_size == 0) last_size = size;
  std::string buf((count - 1) * size + last_size, '\x5a');
  for (unsigned i = 0; i < count; ++i) {
    const std::uint64_t seq = first + i;
    const std::size_t n = i + 1 == count ? last_size : size;
    std::memcpy(buf.data() + i * size, &seq, std::min(n, sizeof(seq)));
  }
  const sockaddr_in a = loopback(port);
  char control[CMSG_SPACE(sizeof(std::uint16_t))] = {};
  iovec iov{buf.data(), buf.size()};
  msghdr h{};
  h.msg_name = const_cast<sockaddr_in*>(&a);
  h.msg_namelen = sizeof(a);
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  h.msg_control = control;
  h.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&h);
  c->cmsg_level = SOL_UDP;
  c->cmsg_type = UDP_SEGMENT;
  c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
  const auto segment = static_cast<std::uint16_t>(size);
  std::memcpy(CMSG_DATA(c), &segment, sizeof(segment));
  sendmsg(fd, &h, 0);
}

double process_cpu_seconds(pid_t pid) {
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  // Fields after the command name (which may contain spaces) close with ')'.
  std::istringstream in(stat.substr(stat.rfind(')') + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15; ++i) {
    in >> field;
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace efu::test
