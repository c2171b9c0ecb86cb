// The smallest useful efu plugin: each datagram holds 8-byte readouts
// (u32 time of flight in ns, u32 pixel id), one event each. The host owns the socket, threads,
// rings and Kafka; the plugin only turns packets into events and counts what it rejects.
#include <cstring>

#include <efu/plugin.h>

namespace {

class ExamplePipeline final : public efu::Pipeline {
 public:
  explicit ExamplePipeline(const efu::PipelineContext& ctx)
      : events_(ctx.events),
        max_pixel_(static_cast<std::uint32_t>(ctx.options.get_int("example-max-pixel"))),
        readouts_(ctx.counters.counter("example.readouts")),
        bad_length_(ctx.counters.counter("example.errors.length")),
        bad_pixel_(ctx.counters.counter("example.errors.pixel")) {
    if (ctx.options.get_int("example-max-pixel") < 1) {
      throw efu::ConfigError("--example-max-pixel: " +
                             ctx.options.get_string("example-max-pixel") +
                             " is too small; expected at least 1");
    }
  }

  // Hot path: no allocation, no lock, no log line. Bad data is counted and skipped.
  void process(efu::PacketBatch batch) override {
    for (const efu::PacketView& packet : batch) {
      if (packet.size % 8 != 0) {
        bad_length_.add();
        continue;
      }
      for (std::uint32_t offset = 0; offset < packet.size; offset += 8) {
        std::uint32_t tof = 0;
        std::uint32_t pixel = 0;
        std::memcpy(&tof, packet.data + offset, 4);
        std::memcpy(&pixel, packet.data + offset + 4, 4);
        readouts_.add();
        if (pixel == 0 || pixel > max_pixel_) {
          bad_pixel_.add();
          continue;
        }
        events_.add(kPulseTimeNs, tof, pixel);
      }
    }
  }

 private:
  static constexpr std::uint64_t kPulseTimeNs = 1'700'000'000'000'000'000ULL;
  efu::EventSink& events_;
  std::uint32_t max_pixel_;
  efu::Counter& readouts_;
  efu::Counter& bad_length_;
  efu::Counter& bad_pixel_;
};

constexpr efu::OptionSpec kOptions[] = {
    {"example-max-pixel", efu::OptionType::kInt, "1024", "Largest valid pixel id"},
};

efu::Pipeline* create(const efu::PipelineContext& ctx) { return new ExamplePipeline(ctx); }

constexpr efu::PluginDescriptor kDescriptor{
    efu::kPluginAbiVersion, "example", "0.1", "out-of-tree example: 8-byte readouts to events",
    kOptions, std::size(kOptions), create, nullptr};

}  // namespace

EFU_PLUGIN(kDescriptor)
