// LD_PRELOAD shim for the start-up tests: setsockopt() and getsockopt() of the SOL_SOCKET option
// whose number is in EFU_TEST_FAIL_SOCKOPT fail with ENOPROTOOPT, as on a kernel without that
// option; every other call goes to the C library.
#include <dlfcn.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>

namespace {
bool refused(int level, int name) {
  const char* fail = std::getenv("EFU_TEST_FAIL_SOCKOPT");
  return fail != nullptr && level == SOL_SOCKET && name == std::atoi(fail);
}
}  // namespace

extern "C" int setsockopt(int fd, int level, int name, const void* value, socklen_t size) {
  using Fn = int (*)(int, int, int, const void*, socklen_t);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "setsockopt"));
  if (refused(level, name)) {
    errno = ENOPROTOOPT;
    return -1;
  }
  return real(fd, level, name, value, size);
}

extern "C" int getsockopt(int fd, int level, int name, void* value, socklen_t* size) {
  using Fn = int (*)(int, int, int, void*, socklen_t*);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "getsockopt"));
  if (refused(level, name)) {
    errno = ENOPROTOOPT;
    return -1;
  }
  return real(fd, level, name, value, size);
}
