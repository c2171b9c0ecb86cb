// The smallest useful efu plugin, built out of tree against the installed SDK. Its packets are
// ESS readout packets (efu::ess::HeaderParser) whose readout blocks (efu::ess::ReadoutBlockWalker)
// are 12 bytes: `fiber u8, fen u8, data_length u16 (=12), tof_ns u32, channel u32`. The pixel is
// 1 + channel + fiber * ChannelsPerFiber, from an optional JSON config file read with
// efu::JsonDocument, so a bad file is reported with its JSON path. The host owns the socket,
// threads, rings and Kafka; the plugin only turns packets into events and counts what it rejects.
#include <efu/counters.h>
#include <efu/ess/byte_reader.h>
#include <efu/ess/readout_blocks.h>
#include <efu/ess/readout_header.h>
#include <efu/json_config.h>
#include <efu/plugin.h>

namespace {

constexpr std::uint8_t kDetectorType = 0x10;
constexpr std::uint16_t kBlockSize = 12;

struct ExampleConfig {
  std::uint32_t channels_per_fiber = 1000;
  std::uint32_t max_pixel = 1024;
};

ExampleConfig read_config(const std::string& path) {
  ExampleConfig c;
  if (path.empty()) return c;
  const efu::JsonDocument doc = efu::JsonDocument::from_file(path, "example config");
  const efu::JsonNode root = doc.root();
  root.check_keys({"ChannelsPerFiber", "MaxPixel"});
  c.channels_per_fiber =
      static_cast<std::uint32_t>(root.get_int_or("ChannelsPerFiber", 1000, 1, 65536));
  c.max_pixel = static_cast<std::uint32_t>(root.get_int("MaxPixel", 1, 100'000'000));
  return c;
}

class ExamplePipeline final : public efu::Pipeline {
 public:
  explicit ExamplePipeline(const efu::PipelineContext& ctx)
      : config_(read_config(ctx.options.get_string("example-config"))),
        events_(ctx.events),
        header_(ctx.counters, kDetectorType),
        blocks_(ctx.counters, kBlockSize, "example.blocks."),
        bad_pixel_(ctx.counters.counter("example.errors.pixel")) {}

  // Hot path: no allocation, no lock, no log line. Bad data is counted and skipped.
  void process(efu::PacketBatch batch) override {
    for (const efu::PacketView& packet : batch) {
      efu::ess::PacketHeader header;
      if (header_.parse(packet.data, packet.size, header) != efu::ess::HeaderStatus::kData) {
        continue;  // rejected (counted by the parser) or a heartbeat
      }
      blocks_.walk(packet.data + header.header_size, packet.size - header.header_size,
                   [&](const efu::ess::ReadoutBlock& b) {
                     const std::uint32_t tof = efu::ess::load_u32(b.data + 4);
                     const std::uint32_t channel = efu::ess::load_u32(b.data + 8);
                     const std::uint64_t pixel =
                         1 + std::uint64_t{channel} +
                         std::uint64_t{b.fiber} * config_.channels_per_fiber;
                     if (pixel > config_.max_pixel) {
                       bad_pixel_.add();
                       return;
                     }
                     events_.add(header.pulse_time_ns, tof, static_cast<std::uint32_t>(pixel));
                   });
    }
  }

 private:
  ExampleConfig config_;
  efu::EventSink& events_;
  efu::ess::HeaderParser header_;
  efu::ess::ReadoutBlockWalker blocks_;
  efu::Counter& bad_pixel_;
};

constexpr efu::OptionSpec kOptions[] = {
    {"example-config", efu::OptionType::kString, "",
     "JSON config: {\"ChannelsPerFiber\": N, \"MaxPixel\": M} (empty: 1000 and 1024)"},
};

efu::Pipeline* create(const efu::PipelineContext& ctx) { return new ExamplePipeline(ctx); }

constexpr efu::PluginDescriptor kDescriptor{efu::kPluginAbiVersion,
                                            "example",
                                            "0.2",
                                            "out-of-tree example: ESS readout blocks to events",
                                            kOptions,
                                            std::size(kOptions),
                                            create,
                                            &efu::ess::route_key,
                                            /*uses_source=*/false};

}  // namespace

EFU_PLUGIN(kDescriptor)
