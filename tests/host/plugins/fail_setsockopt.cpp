// LD_PRELOAD shim for the start-up tests: setsockopt() of the SOL_SOCKET option whose number is
// in EFU_TEST_FAIL_SOCKOPT fails with ENOPROTOOPT, as on a kernel without that option; every
// other call goes to the C library.
#include <dlfcn.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>

extern "C" int setsockopt(int fd, int level, int name, const void* value, socklen_t size) {
  using Fn = int (*)(int, int, int, const void*, socklen_t);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "setsockopt"));
  const char* fail = std::getenv("EFU_TEST_FAIL_SOCKOPT");
  if (fail != nullptr && level == SOL_SOCKET && name == std::atoi(fail)) {
    errno = ENOPROTOOPT;
    return -1;
  }
  return real(fd, level, name, value, size);
}
