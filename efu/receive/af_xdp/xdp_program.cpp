#include "receive/af_xdp/xdp_program.h"

#include <arpa/inet.h>
#include <linux/bpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include "receive/af_xdp/xdp_program_abi.h"
#include "efu/errors.h"

// The XDP program, compiled for BPF at build time (embed_bytes.cmake).
extern const unsigned char efu_xdp_redirect_object[];
extern const std::size_t efu_xdp_redirect_object_size;

namespace efu::xdp {
namespace {

constexpr const char* kProgramName = "efu_xdp_redirect";

std::string errno_text(int err) { return std::strerror(err < 0 ? -err : err); }

// libbpf explains its failures on stderr; efu says in one line what went wrong, so libbpf's
// text (the verifier log included) goes to the debug log.
int libbpf_to_log(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG || !spdlog::should_log(spdlog::level::debug)) return 0;
  char line[1024];
  const int n = std::vsnprintf(line, sizeof(line), format, args);
  std::string text(line);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  spdlog::debug("libbpf: {}", text);
  return n;
}

efu_xdp_config program_config(const FrameFilter& f) {
  efu_xdp_config c{};
  c.port = htons(f.port);
  c.match = static_cast<__u16>(
      (f.ipv4 ? EFU_XDP_MATCH_IPV4 : 0) | (f.ipv6 ? EFU_XDP_MATCH_IPV6 : 0) |
      (f.match_addr4 ? EFU_XDP_MATCH_ADDR4 : 0) | (f.match_addr6 ? EFU_XDP_MATCH_ADDR6 : 0));
  std::memcpy(&c.addr4, f.addr4.data(), 4);
  std::memcpy(c.addr6, f.addr6.data(), 16);
  return c;
}

}  // namespace

XdpProgram::XdpProgram(const FrameFilter& filter, bool multi_buffer) {
  libbpf_set_print(libbpf_to_log);
  try {
    bpf_object_open_opts opts{};
    opts.sz = sizeof(opts);
    opts.object_name = "efu_xdp";
    object_ = bpf_object__open_mem(efu_xdp_redirect_object, efu_xdp_redirect_object_size, &opts);
    if (object_ == nullptr) {
      throw ConfigError("--receive-backend af_xdp: libbpf cannot open efu's XDP program: " +
                        errno_text(errno) + "; expected a kernel with BTF support");
    }
    bpf_map* rodata = bpf_object__find_map_by_name(object_, ".rodata");
    bpf_program* prog = bpf_object__find_program_by_name(object_, kProgramName);
    std::size_t rodata_size = 0;
    if (rodata == nullptr || prog == nullptr ||
        bpf_map__initial_value(rodata, &rodata_size) == nullptr ||
        rodata_size != sizeof(efu_xdp_config)) {
      throw ConfigError(
          "--receive-backend af_xdp: efu's embedded XDP program is not the one this "
          "efu was built for; expected a consistent build");
    }
    const efu_xdp_config cfg = program_config(filter);
    bpf_map__set_initial_value(rodata, &cfg, sizeof(cfg));
    // Multi-buffer frames reach the program only if it says it can take them (and then veth
    // and drivers allow an MTU above a page).
    if (multi_buffer) {
      bpf_program__set_flags(prog, bpf_program__flags(prog) | BPF_F_XDP_HAS_FRAGS);
    }
    if (const int rc = bpf_object__load(object_); rc != 0) {
      if (rc == -EPERM || rc == -EACCES) {
        throw ConfigError(
            "--receive-backend af_xdp: the kernel refused to load efu's XDP program (" +
            errno_text(rc) + "); expected CAP_BPF and CAP_NET_ADMIN (root)");
      }
      throw ConfigError(
          "--receive-backend af_xdp: the kernel refused efu's XDP program: " + errno_text(rc) +
          "; expected Linux >= 5.10 with BPF and XDP (details: --log-level debug)");
    }
    prog_fd_ = bpf_program__fd(prog);
    sockets_fd_ = bpf_map__fd(bpf_object__find_map_by_name(object_, "efu_xsks"));
    const int counters = bpf_map__fd(bpf_object__find_map_by_name(object_, "efu_counters"));
    counters_bytes_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* mapped = counters < 0
                       ? MAP_FAILED
                       : mmap(nullptr, counters_bytes_, PROT_READ, MAP_SHARED, counters, 0);
    if (mapped == MAP_FAILED) {
      throw ConfigError("--receive-backend af_xdp: cannot map the XDP program's counters: " +
                        errno_text(errno) + "; expected Linux >= 5.5 (mmap-able BPF arrays)");
    }
    counters_ = static_cast<const volatile std::uint64_t*>(mapped);
  } catch (...) {
    release();
    throw;
  }
}

XdpProgram::~XdpProgram() { release(); }

void XdpProgram::set_socket(unsigned queue, int socket_fd) {
  const std::uint32_t key = queue;
  if (sockets_fd_ < 0 || bpf_map_update_elem(sockets_fd_, &key, &socket_fd, 0) != 0) {
    throw ConfigError("--queue: " + std::to_string(queue) +
                      ": cannot register the AF_XDP socket with the XDP program: " +
                      errno_text(errno) + "; expected a queue below 256");
  }
}

void XdpProgram::release() noexcept {
  if (counters_ != nullptr) munmap(const_cast<std::uint64_t*>(counters_), counters_bytes_);
  counters_ = nullptr;
  if (object_ != nullptr) bpf_object__close(object_);  // closes the program and map fds
  object_ = nullptr;
  prog_fd_ = sockets_fd_ = -1;
}

}  // namespace efu::xdp
