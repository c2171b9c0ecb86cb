// Test plugin "counting": checks a 64-bit sequence number at the start of each packet, counts
// packets, bytes and sequence gaps, and emits one event per packet (pixel = sequence % 1000).
#include <cstring>

#include "efu/plugin.h"

namespace {

class CountingPipeline final : public efu::Pipeline {
 public:
  explicit CountingPipeline(const efu::PipelineContext& ctx)
      : events_(ctx.events),
        packets_(ctx.counters.counter("counting.packets")),
        bytes_(ctx.counters.counter("counting.bytes")),
        gaps_(ctx.counters.counter("counting.gaps")),
        flushes_(ctx.counters.counter("counting.flushes")),
        emit_(ctx.options.get_bool("counting-emit")) {
    if (ctx.options.get_int("counting-fail") != 0) {
      throw efu::ConfigError("--counting-fail: " + ctx.options.get_string("counting-fail") +
                             " asks the plugin to fail; expected 0");
    }
  }
  void process(efu::PacketBatch batch) override {
    for (const efu::PacketView& p : batch) {
      packets_.add();
      bytes_.add(p.size);
      if (p.size < 8) continue;
      std::uint64_t seq = 0;
      std::memcpy(&seq, p.data, sizeof(seq));
      if (have_last_ && seq != last_ + 1) gaps_.add();
      last_ = seq;
      have_last_ = true;
      if (emit_) events_.add(1'000'000'000ULL, 1000, static_cast<std::uint32_t>(seq % 1000));
    }
  }
  void flush() override { flushes_.add(); }

 private:
  efu::EventSink& events_;
  efu::Counter& packets_;
  efu::Counter& bytes_;
  efu::Counter& gaps_;
  efu::Counter& flushes_;
  bool emit_;
  std::uint64_t last_ = 0;
  bool have_last_ = false;
};

// Routes by the low byte of the sequence number, so several processing threads share the load.
[[maybe_unused]] std::uint32_t route_by_low_byte(const efu::PacketView& packet) noexcept {
  return packet.data[0];
}

constexpr efu::OptionSpec kOptions[] = {
    {"counting-emit", efu::OptionType::kBool, "on", "Emit one event per packet"},
    {"counting-fail", efu::OptionType::kInt, "0", "Non-zero: the factory throws ConfigError"},
};

efu::Pipeline* create(const efu::PipelineContext& ctx) { return new CountingPipeline(ctx); }

constexpr efu::PluginDescriptor kDescriptor{
    efu::kPluginAbiVersion, "counting", "1.0", "test plugin: counts packets and sequence gaps",
    kOptions, std::size(kOptions), create, EFU_TEST_ROUTE};

}  // namespace

EFU_PLUGIN(kDescriptor)
