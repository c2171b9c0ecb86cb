#include "receive/af_xdp/xdp_socket.h"

#include <arpa/inet.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include "receive/af_xdp/xdp_program_abi.h"
#include "efu/errors.h"

// Newer than the kernel headers of Debian 12 (6.1); the values are the kernel's ABI (6.6+).
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif

namespace efu::xdp {
namespace {

constexpr std::uint32_t kCompletionRingSize = 64;  // receive only: nothing completes

std::string errno_text(int err) { return std::strerror(err < 0 ? -err : err); }

bool has_capability(int cap) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return true;  // cannot tell: the kernel decides
  return (data[cap / 32].effective & (1u << (cap % 32))) != 0;
}

void check_capabilities() {
  std::string missing;
  auto need = [&](bool ok, const char* name) {
    if (!ok) missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  need(has_capability(CAP_NET_ADMIN), "CAP_NET_ADMIN");
  need(has_capability(CAP_NET_RAW), "CAP_NET_RAW");
  need(has_capability(CAP_BPF) || has_capability(CAP_SYS_ADMIN), "CAP_BPF");
  if (!missing.empty()) {
    throw ConfigError("--receive-backend af_xdp: this process lacks " + missing +
                      "; expected root or the capabilities cap_net_admin,cap_net_raw,cap_bpf "
                      "(setcap, or AmbientCapabilities= in a systemd unit)");
  }
}

// The UMEM is pinned memory: it counts against RLIMIT_MEMLOCK unless CAP_IPC_LOCK.
void check_memlock(std::size_t bytes) {
  if (has_capability(CAP_IPC_LOCK)) return;
  rlimit limit{};
  getrlimit(RLIMIT_MEMLOCK, &limit);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < bytes) {
    limit.rlim_cur = limit.rlim_max;  // raise the soft limit as far as allowed
    setrlimit(RLIMIT_MEMLOCK, &limit);
  }
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < bytes) {
    throw ConfigError("--xdp-frames: the UMEM needs " + std::to_string(bytes >> 20) +
                      " MiB of locked memory but RLIMIT_MEMLOCK allows " +
                      std::to_string(limit.rlim_cur >> 20) +
                      " MiB; expected fewer frames, a higher limit (ulimit -l, LimitMEMLOCK=) "
                      "or CAP_IPC_LOCK");
  }
}

// Receive queues of the interface, from sysfs; 0 when sysfs does not show it.
unsigned receive_queues(const std::string& interface) {
  std::error_code ec;
  unsigned n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator("/sys/class/net/" + interface + "/queues", ec)) {
    if (e.path().filename().string().rfind("rx-", 0) == 0) ++n;
  }
  return n;
}

FrameFilter make_filter(const XdpSocketConfig& config) {
  FrameFilter f;
  f.port = static_cast<std::uint16_t>(config.port);
  const std::string& a = config.bind_address;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, a.c_str(), &v4) == 1) {
    f.ipv4 = true;
    f.ipv6 = false;
    f.match_addr4 = v4.s_addr != INADDR_ANY;
    std::memcpy(f.addr4.data(), &v4, 4);
  } else if (inet_pton(AF_INET6, a.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {  // ::ffff:a.b.c.d is that IPv4 address
      f.ipv4 = true;
      f.ipv6 = false;
      f.match_addr4 = true;
      std::memcpy(f.addr4.data(), v6.s6_addr + 12, 4);
    } else {
      // "::" receives IPv4 and IPv6, as a dual-stack socket bound to :: does.
      f.ipv4 = IN6_IS_ADDR_UNSPECIFIED(&v6);
      f.ipv6 = true;
      f.match_addr6 = !IN6_IS_ADDR_UNSPECIFIED(&v6);
      std::memcpy(f.addr6.data(), v6.s6_addr, 16);
    }
  } else {
    throw ConfigError("--bind: '" + a +
                      "' is not an address; expected a numeric IPv4 or IPv6 "
                      "address (0.0.0.0: any IPv4, ::: any IPv4 and IPv6)");
  }
  return f;
}

}  // namespace

AttachMode parse_attach_mode(const std::string& text) {
  if (text == "auto") return AttachMode::kAuto;
  if (text == "native") return AttachMode::kNative;
  if (text == "generic") return AttachMode::kGeneric;
  throw ConfigError("--xdp-mode: '" + text + "' is not a mode; expected auto, native or generic");
}

BindMode parse_bind_mode(const std::string& text) {
  if (text == "auto") return BindMode::kAuto;
  if (text == "zero-copy") return BindMode::kZeroCopy;
  if (text == "copy") return BindMode::kCopy;
  throw ConfigError("--xdp-bind-mode: '" + text +
                    "' is not a mode; expected auto, zero-copy or copy");
}

XdpSocket::XdpSocket(const XdpSocketConfig& config) {
  if (config.interface.empty()) {
    throw ConfigError(
        "--interface: missing; --receive-backend af_xdp needs the network "
        "interface to receive on (a name as in `ip link`)");
  }
  if (config.port < 1 || config.port > 65535) {
    throw ConfigError("--port: " + std::to_string(config.port) +
                      " is not valid with --receive-backend af_xdp; expected 1..65535");
  }
  if (config.frames < 64 || config.frames > (1u << 20) ||
      (config.frames & (config.frames - 1)) != 0) {
    throw ConfigError("--xdp-frames: " + std::to_string(config.frames) +
                      " is not valid; expected a power of two from 64 to 1048576");
  }
  filter_ = make_filter(config);
  ifindex_ = static_cast<int>(if_nametoindex(config.interface.c_str()));
  if (ifindex_ == 0) {
    throw ConfigError("--interface: '" + config.interface +
                      "' is not an interface of this host (network namespace); expected a name "
                      "as in `ip link`");
  }
  if (const unsigned queues = receive_queues(config.interface);
      queues != 0 && config.queue >= queues) {
    throw ConfigError("--queue: " + std::to_string(config.queue) + " is not a receive queue of '" +
                      config.interface + "'; expected 0.." + std::to_string(queues - 1));
  }
  if (config.umem_frames != 0 && config.umem_frames < config.frames) {
    throw ConfigError("af_xdp: " + std::to_string(config.umem_frames) +
                      " UMEM frames are fewer than the fill ring's " +
                      std::to_string(config.frames) + "; expected at least as many");
  }
  check_capabilities();
  frames_ = config.frames;
  umem_frames_ = config.umem_frames != 0 ? config.umem_frames : config.frames;
  frame_capacity_ = kFrameData;
  try {
    create_umem(config);
    create_socket(config);
    load_program(config);
    attach_program(config);
  } catch (...) {
    release();
    throw;
  }
  spdlog::info(
      "af_xdp: {} queue {}: XDP program in {} mode, socket in {} mode, {}; {} UMEM frames of {} B, "
      "rings of {}",
      config.interface, config.queue, native_ ? "native" : "generic (skb)",
      zero_copy_ ? "zero-copy" : "copy",
      multi_buffer_ ? "multi-buffer frames (datagrams up to --max-datagram)"
                    : "single-buffer frames (datagrams up to " +
                          std::to_string(frame_capacity_ - 14 - 20 - 8) + " B on IPv4, " +
                          std::to_string(frame_capacity_ - 14 - 40 - 8) + " B on IPv6)",
      umem_frames_, kFrameSize, frames_);
}

XdpSocket::~XdpSocket() { release(); }

void XdpSocket::create_umem(const XdpSocketConfig& config) {
  umem_bytes_ = static_cast<std::size_t>(umem_frames_) * kFrameSize;
  check_memlock(umem_bytes_);
  void* area = mmap(nullptr, umem_bytes_, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (area == MAP_FAILED) {
    throw ConfigError("--xdp-frames: cannot map " + std::to_string(umem_bytes_ >> 20) +
                      " MiB for the UMEM: " + errno_text(errno) + "; expected fewer frames");
  }
  umem_area_ = static_cast<std::uint8_t*>(area);
  xsk_umem_config cfg{};
  cfg.fill_size = config.frames;
  cfg.comp_size = kCompletionRingSize;
  cfg.frame_size = kFrameSize;
  cfg.frame_headroom = 0;
  cfg.flags = 0;
  if (const int rc = xsk_umem__create(&umem_, umem_area_, umem_bytes_, &fill_, &completion_, &cfg);
      rc != 0) {
    if (rc == -EAFNOSUPPORT) {
      throw ConfigError(
          "--receive-backend af_xdp: the kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS); "
          "expected Linux >= 5.4 built with them, or --receive-backend socket");
    }
    throw ConfigError("--receive-backend af_xdp: cannot register the UMEM (" +
                      std::to_string(umem_bytes_ >> 20) + " MiB): " + errno_text(rc) +
                      "; expected locked memory for it (CAP_IPC_LOCK or RLIMIT_MEMLOCK)");
  }
}

void XdpSocket::create_socket(const XdpSocketConfig& config) {
  struct Attempt {
    std::uint16_t flags;
    const char* what;
  };
  std::vector<Attempt> attempts;
  if (config.bind != BindMode::kCopy) {
    attempts.push_back({XDP_ZEROCOPY | XDP_USE_SG, "zero-copy, multi-buffer"});
    attempts.push_back({XDP_ZEROCOPY, "zero-copy"});
  }
  if (config.bind != BindMode::kZeroCopy) {
    attempts.push_back({XDP_COPY | XDP_USE_SG, "copy, multi-buffer"});
    attempts.push_back({XDP_COPY, "copy"});
  }
  std::string failures;
  for (const Attempt& a : attempts) {
    xsk_socket_config cfg{};
    cfg.rx_size = config.frames;
    cfg.tx_size = 0;
    cfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;  // efu attaches its own program
    cfg.xdp_flags = 0;
    cfg.bind_flags = static_cast<std::uint16_t>(a.flags | XDP_USE_NEED_WAKEUP);
    const int rc = xsk_socket__create(&xsk_, config.interface.c_str(), config.queue, umem_, &rx_,
                                      nullptr, &cfg);
    if (rc == 0) {
      zero_copy_ = (a.flags & XDP_ZEROCOPY) != 0;
      multi_buffer_ = (a.flags & XDP_USE_SG) != 0;
      fd_ = xsk_socket__fd(xsk_);
      if (!failures.empty()) spdlog::info("af_xdp: not available: {}", failures);
      break;
    }
    xsk_ = nullptr;
    if (rc == -EAFNOSUPPORT) {
      throw ConfigError(
          "--receive-backend af_xdp: the kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS); "
          "expected Linux >= 5.4 built with them, or --receive-backend socket");
    }
    if (rc == -EBUSY) {
      throw ConfigError("--queue: queue " + std::to_string(config.queue) + " of '" +
                        config.interface +
                        "' already has an AF_XDP socket; expected a queue no other process uses");
    }
    if (rc == -EPERM || rc == -EACCES) {
      throw ConfigError("--receive-backend af_xdp: the kernel refused the AF_XDP socket (" +
                        errno_text(rc) + "); expected CAP_NET_RAW and CAP_NET_ADMIN");
    }
    failures += (failures.empty() ? "" : "; ") + std::string(a.what) + " (" + errno_text(rc) + ")";
  }
  if (fd_ < 0) {
    throw ConfigError(
        "--interface: the kernel refused an AF_XDP socket on '" + config.interface + "' queue " +
        std::to_string(config.queue) + ": " + failures +
        "; expected an interface and queue that support AF_XDP" +
        (config.bind == BindMode::kZeroCopy ? " zero-copy (try --xdp-bind-mode auto)" : ""));
  }
  // The first `frames` frames start on the fill ring; the receiver puts each back after use.
  if (!config.prefill) return;
  std::uint32_t index = 0;
  if (xsk_ring_prod__reserve(&fill_, frames_, &index) != frames_) {
    throw ConfigError("--xdp-frames: the fill ring does not take " + std::to_string(frames_) +
                      " frames; expected a power of two");
  }
  for (std::uint32_t i = 0; i < frames_; ++i) {
    *xsk_ring_prod__fill_addr(&fill_, index + i) = static_cast<std::uint64_t>(i) * kFrameSize;
  }
  xsk_ring_prod__submit(&fill_, frames_);
}

void XdpSocket::load_program(const XdpSocketConfig& config) {
  program_ = std::make_unique<XdpProgram>(filter_, multi_buffer_);
  program_->set_socket(config.queue, fd_);
}

void XdpSocket::attach_program(const XdpSocketConfig& config) {
  const int prog_fd = program_->fd();
  std::vector<std::pair<std::uint32_t, bool>> modes;  // flags, native
  if (config.attach != AttachMode::kGeneric) modes.emplace_back(XDP_FLAGS_DRV_MODE, true);
  if (config.attach != AttachMode::kNative) modes.emplace_back(XDP_FLAGS_SKB_MODE, false);
  std::string failures;
  for (const auto& [flags, native] : modes) {
    bpf_link_create_opts opts{};
    opts.sz = sizeof(opts);
    opts.flags = flags;
    // A BPF link: the program stays attached exactly as long as efu holds the link's fd.
    const int fd = bpf_link_create(prog_fd, ifindex_, BPF_XDP, &opts);
    if (fd >= 0) {
      link_fd_ = fd;
      native_ = native;
      if (!failures.empty()) spdlog::info("af_xdp: not available: {}", failures);
      return;
    }
    const int err = errno;
    if (err == EBUSY || err == EEXIST) {
      __u32 id = 0;
      bpf_xdp_query_id(ifindex_, 0, &id);
      throw ConfigError("--interface: '" + config.interface + "' already has an XDP program (id " +
                        std::to_string(id) + "); expected an interface without one (remove it: " +
                        "ip link set dev " + config.interface + " xdp off)");
    }
    if (err == EPERM || err == EACCES) {
      throw ConfigError("--receive-backend af_xdp: the kernel refused to attach the XDP program (" +
                        errno_text(err) + "); expected CAP_NET_ADMIN");
    }
    failures += (failures.empty() ? "" : "; ") + std::string(native ? "native" : "generic") +
                " XDP (" + errno_text(err) + ")";
  }
  throw ConfigError("--interface: the kernel refused XDP on '" + config.interface +
                    "': " + failures + "; expected a driver with XDP support" +
                    (config.attach == AttachMode::kNative ? " (or --xdp-mode auto)" : ""));
}

XdpKernelCounters XdpSocket::read_counters() const {
  XdpKernelCounters c;
  xdp_statistics s{};
  socklen_t len = sizeof(s);
  if (getsockopt(fd_, SOL_XDP, XDP_STATISTICS, &s, &len) == 0) {
    c.rx_dropped = s.rx_dropped;
    c.rx_ring_full = s.rx_ring_full;
    c.rx_invalid_descs = s.rx_invalid_descs;
    c.fill_ring_empty = s.rx_fill_ring_empty_descs;
  }
  if (program_) c.no_socket = program_->counter(EFU_XDP_COUNTER_NO_SOCKET);
  return c;
}

void XdpSocket::wake_up() const { recvfrom(fd_, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr); }

void XdpSocket::release() noexcept {
  if (link_fd_ >= 0) close(link_fd_);  // detaches the program
  link_fd_ = -1;
  if (xsk_ != nullptr) xsk_socket__delete(xsk_);
  xsk_ = nullptr;
  fd_ = -1;
  if (umem_ != nullptr) xsk_umem__delete(umem_);
  umem_ = nullptr;
  program_.reset();
  if (umem_area_ != nullptr) munmap(umem_area_, umem_bytes_);
  umem_area_ = nullptr;
}

}  // namespace efu::xdp
