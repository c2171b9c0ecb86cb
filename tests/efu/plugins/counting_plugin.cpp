// Test plugin "counting": checks a 64-bit sequence number at the start of each packet, counts
// packets, bytes and sequence gaps (over all packets, and per sender: one sequence per flow),
// and emits one event per packet (pixel = sequence % 1000). Options make it fail on purpose.
#include <array>
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
        flow_gaps_(ctx.counters.counter("counting.flow_gaps")),
        flows_(ctx.counters.counter("counting.flows")),
        flow_table_full_(ctx.counters.counter("counting.flow_table_full")),
        flushes_(ctx.counters.counter("counting.flushes")),
        emit_(ctx.options.get_bool("counting-emit")),
        throw_at_(ctx.options.get_int("counting-throw-at")) {
    const std::int64_t fail = ctx.options.get_int("counting-fail");
    if (fail == 2) throw 42;  // not a std::exception: the host must still report it
    if (fail != 0) {
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
      check_flow(*p.source, seq);
      if (emit_) events_.add(1'000'000'000ULL, 1000, static_cast<std::uint32_t>(seq % 1000));
      if (static_cast<std::int64_t>(seq) == throw_at_) throw 7;  // an int, not a std::exception
    }
  }
  void flush() override { flushes_.add(); }

 private:
  // Per sender port: the flows of one test stay in order on one processing thread. The table is
  // open-addressed on the whole port (linear probing), so two ports never share an entry and
  // counting.flows is exactly the number of distinct ports, up to the table's size; past that,
  // counting.flow_table_full counts the packets that could not be followed.
  void check_flow(const efu::PacketSource& source, std::uint64_t seq) {
    const std::uint16_t port = source.port();
    for (std::size_t probe = 0; probe < flow_table_.size(); ++probe) {
      Flow& f = flow_table_[(port + probe) % flow_table_.size()];
      if (!f.seen) {
        f = Flow{port, true, seq};
        flows_.add();
        return;
      }
      if (f.port != port) continue;
      if (seq != f.last + 1) flow_gaps_.add();
      f.last = seq;
      return;
    }
    flow_table_full_.add();
  }
  struct Flow {
    std::uint16_t port = 0;
    bool seen = false;
    std::uint64_t last = 0;
  };

  efu::EventSink& events_;
  efu::Counter& packets_;
  efu::Counter& bytes_;
  efu::Counter& gaps_;
  efu::Counter& flow_gaps_;
  efu::Counter& flows_;
  efu::Counter& flow_table_full_;
  efu::Counter& flushes_;
  bool emit_;
  std::int64_t throw_at_;
  std::uint64_t last_ = 0;
  bool have_last_ = false;
  std::array<Flow, 251> flow_table_{};
};

// Routes by the low byte of the sequence number, so several processing threads share the load.
[[maybe_unused]] std::uint32_t route_by_low_byte(const efu::PacketView& packet) noexcept {
  return packet.data[0];
}

// Routes by sender, so each flow stays on one processing thread.
[[maybe_unused]] std::uint32_t route_by_flow(const efu::PacketView& packet) noexcept {
  return packet.source->flow_hash();
}

constexpr efu::OptionSpec kOptions[] = {
    {"counting-emit", efu::OptionType::kBool, "on", "Emit one event per packet"},
    {"counting-fail", efu::OptionType::kInt, "0",
     "1: the factory throws ConfigError; 2: it throws an int"},
    {"counting-throw-at", efu::OptionType::kInt, "-1",
     "process() throws an int after the packet with this sequence number (-1: never)"},
};

efu::Pipeline* create(const efu::PipelineContext& ctx) { return new CountingPipeline(ctx); }

#ifndef EFU_TEST_USES_SOURCE
#define EFU_TEST_USES_SOURCE true
#endif

constexpr efu::PluginDescriptor kDescriptor{efu::kPluginAbiVersion,
                                            "counting",
                                            "1.0",
                                            "test plugin: counts packets and sequence gaps",
                                            kOptions,
                                            std::size(kOptions),
                                            create,
                                            EFU_TEST_ROUTE,
                                            EFU_TEST_USES_SOURCE};

}  // namespace

EFU_PLUGIN(kDescriptor)
