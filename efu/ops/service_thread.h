// Threads of the operator interfaces (command port, Graphite, the Prometheus exposer).
#pragma once

#include <pthread.h>

#include <csignal>
#include <thread>
#include <utility>

namespace efu {

/// Blocks SIGINT and SIGTERM in the calling thread while it lives, so that threads created
/// meanwhile (ours or a library's) inherit the mask: efu takes the stop signals with sigwait()
/// on its signal thread, and a thread that had them unblocked would be killed by them instead.
class StopSignalsBlocked {
 public:
  StopSignalsBlocked() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &previous_);
  }
  ~StopSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  StopSignalsBlocked(const StopSignalsBlocked&) = delete;
  StopSignalsBlocked& operator=(const StopSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

/// std::thread(f), with the stop signals blocked in the new thread.
template <typename F>
std::thread start_service_thread(F&& f) {
  StopSignalsBlocked blocked;
  return std::thread(std::forward<F>(f));
}

}  // namespace efu
