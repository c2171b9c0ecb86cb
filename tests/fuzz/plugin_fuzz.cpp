// One libFuzzer driver for every detector plugin, linked with a plugin's own sources (its
// plugin.cpp and core library), so the plugin is exercised through the contract the host uses:
// descriptor, options, create(), process(), tick(), flush().
//
// Two modes, chosen at build time (tests/fuzz/CMakeLists.txt):
// - packets (default): one pipeline for the whole run; each input is a series of datagrams, each a 2-byte little-endian length
//   followed by that many bytes (a short tail is one last datagram). They go through process()
//   in batches of up to 8, with a tick() between batches and flush() at the end. Any datagram
//   must be counted and skipped or used; nothing may crash, leak or read out of bounds.
// - config (EFU_FUZZ_CONFIG_OPTION="geometry", for example): the input is the content of the file
//   that option names. create() must either succeed or throw efu::ConfigError; anything else
//   (another exception, a crash) is a finding. A pipeline that is created also gets one packet.
//
// EFU_FUZZ_OPTIONS: "name=value;name=value" set on top of the plugin's defaults (for example a
// geometry file from the repo), so the packets reach past the configuration.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "efu/counters.h"
#include "efu/errors.h"
#include "efu/plugin.h"

extern "C" const efu::PluginDescriptor* efu_plugin_entry();

namespace {

#ifndef EFU_FUZZ_OPTIONS
#define EFU_FUZZ_OPTIONS ""
#endif

class CountingSink final : public efu::EventSink {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override { ++events; }
  std::uint64_t events = 0;
};

efu::OptionValues options(const efu::PluginDescriptor& d) {
  efu::OptionValues values;
  for (std::size_t i = 0; i < d.option_count; ++i) {
    values.set(d.options[i].name, d.options[i].default_value, false);
  }
  std::string_view extra = EFU_FUZZ_OPTIONS;
  while (!extra.empty()) {
    const std::size_t end = std::min(extra.find(';'), extra.size());
    const std::string_view item = extra.substr(0, end);
    const std::size_t eq = item.find('=');
    if (eq != std::string_view::npos) {
      values.set(item.substr(0, eq), std::string(item.substr(eq + 1)), true);
    }
    extra.remove_prefix(std::min(end + 1, extra.size()));
  }
  return values;
}

void run_packets(efu::Pipeline& pipeline, const std::uint8_t* data, std::size_t size) {
  static std::vector<efu::PacketView> batch;  // reused: no allocation per input
  batch.clear();
  std::uint64_t now_ns = 1'000'000'000;
  while (size > 0) {
    std::size_t length = size;
    if (size >= 2) {
      length = static_cast<std::size_t>(data[0] | data[1] << 8);
      data += 2;
      size -= 2;
      if (length > size) length = size;
    }
    if (length > 0) {  // the host never hands over an empty datagram
      batch.push_back(efu::PacketView{data, static_cast<std::uint32_t>(length)});
    }
    data += length;
    size -= length;
    if (batch.size() == 8 || size == 0) {
      pipeline.process(batch);
      batch.clear();
      now_ns += 10'000'000;
      pipeline.tick(now_ns);
    }
  }
  pipeline.flush();
}

}  // namespace

// What the plugins log (the udp instrument's per-sender summary at each flush, for one) is
// formatted as in efu, so the formatting is fuzzed too, but goes nowhere: a line per input
// would slow the run and fill the disk (14 M lines in 20 minutes).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  auto quiet = spdlog::null_logger_mt("fuzz");
  quiet->set_level(spdlog::level::trace);
  spdlog::set_default_logger(quiet);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const efu::PluginDescriptor& d = *efu_plugin_entry();
#ifdef EFU_FUZZ_CONFIG_OPTION
  efu::OptionValues values = options(d);
  efu::CounterRegistry counters;
  CountingSink sink;
#else
  static const efu::OptionValues values = options(d);
  static efu::CounterRegistry counters;
  static CountingSink sink;
#endif
#ifdef EFU_FUZZ_CONFIG_OPTION
  // The input as a file without touching the disk.
  const int fd = memfd_create("efu-fuzz-config", 0);
  if (fd < 0) return 0;
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  values.set(EFU_FUZZ_CONFIG_OPTION, "/proc/self/fd/" + std::to_string(fd), true);
  std::unique_ptr<efu::Pipeline> pipeline;
  try {
    pipeline.reset(d.create(efu::PipelineContext{values, counters, sink, 0, 1}));
  } catch (const efu::ConfigError&) {
  }
  close(fd);
  if (pipeline) {
    static const std::uint8_t kNothing[1] = {0};
    run_packets(*pipeline, kNothing, sizeof kNothing);
  }
#else
  // One pipeline for the whole run: creating one per input would cost far more than the input
  // (buffers sized from the geometry). State carried across inputs only widens what is reached.
  static efu::Pipeline* const pipeline = d.create(efu::PipelineContext{values, counters, sink, 0, 1});
  run_packets(*pipeline, data, size);
#endif
  return 0;
}
