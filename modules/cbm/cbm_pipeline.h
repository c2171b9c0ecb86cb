// The cbm Pipeline: ESS header (type 0x10 CBM, 0x50 BEER) → CBM readouts checked against the
// Topology (readout_parser.h) → per monitor, its own source: ev44 events, or a da00 TOF
// histogram (efu::da00::TofHistogram) published per window of AggregatedFrames pulses
// (docs/cbm.md "What each type publishes").
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "efu/counters.h"
#include "efu/da00/tof_histogram.h"
#include "efu/ess/readout_header.h"
#include "efu/event_buffer.h"
#include "efu/options.h"
#include "efu/plugin.h"
#include "readout_parser.h"

namespace efu::cbm {

struct CbmSettings {
  std::string config_path;  // the facility's beam-monitor config (--geometry)
};

/// The plugin's option table (plugin.cpp exports it; tests use it to build OptionValues).
extern const OptionSpec kOptions[];
extern const std::size_t kOptionCount;

/// Reads the plugin options; throws ConfigError naming the bad option.
CbmSettings settings_from_options(const OptionValues& options);

/// A shipped config by name (cbm.json, beer.json): the source tree's copy, else the installed one.
std::string shipped_config_path(const std::string& name);

/// What every processing thread's pipeline reads and none writes, loaded once by init().
struct CbmShared {
  CbmSettings settings;
  CbmConfig config;
  SlotTable slots;
};
/// Loads the config file. Throws ConfigError.
std::unique_ptr<CbmShared> load_shared(CbmSettings settings);
/// On a config already loaded (tests, benchmarks, the generator).
std::unique_ptr<CbmShared> make_shared(CbmConfig config);

/// The da00 histogram of a monitor with Schema da00: period MaxTofBin, BinCount bins,
/// AggregatedFrames pulses summed or averaged, signal unit "A" (as the reference's CbmBase).
da00::TofHistogramSpec histogram_spec(const Monitor& monitor) noexcept;

/// The route_key of the plugin: 0 for every packet. Every monitor hangs on one ring
/// (MonitorRing) and a packet may hold readouts of every monitor, so one thread must see every
/// packet for each source's stream to be whole (a da00 window in particular).
std::uint32_t route_key(const PacketView& packet) noexcept;

/// The accepted readouts per type: readouts.accepted.event_0d, .event_2d, .ibm.
inline constexpr std::array<const char*, 3> kAcceptedNames{"event_0d", "event_2d", "ibm"};

class CbmPipeline final : public Pipeline {
 public:
  /// On the state init() loaded once. Asks the context for each monitor's source.
  CbmPipeline(const CbmShared& shared, const PipelineContext& context);
  /// Loads its own state (the fuzz driver, a create() without init()).
  CbmPipeline(const CbmSettings& settings, const PipelineContext& context);

  void process(PacketBatch batch) override;
  /// Brings the histograms.* counters up to date.
  void tick(std::uint64_t now_ns) override;
  /// Publishes every histogram's pending window.
  void flush() override;

 private:
  /// One monitor's output, indexed by its slot (its Topology index).
  struct Output {
    MonitorType type;
    Schema schema;
    std::uint32_t pixel_offset;
    std::uint16_t width;
    EventBuffer* events;            // ev44: its source's buffer
    da00::TofHistogram* histogram;  // da00
    HistogramSink* histogram_sink;  // da00
  };

  CbmPipeline(std::unique_ptr<const CbmShared> own, const CbmShared* shared,
              const PipelineContext& context);
  void bind_outputs(const PipelineContext& context);
  void process_packet(const PacketView& packet) noexcept;
  void on_readout(const CheckedReadout& c) noexcept;
  void add_to_histogram(const Output& out, std::uint64_t tof_ns, std::int32_t value) noexcept;
  void update_histogram_counters() noexcept;

  std::unique_ptr<const CbmShared> own_;  // only when the pipeline loaded its own
  const CbmShared& shared_;
  ess::HeaderParser header_;
  ReadoutParser parser_;
  std::vector<std::unique_ptr<EventBuffer>> buffers_;            // ev44 monitors
  std::vector<std::unique_ptr<da00::TofHistogram>> histograms_;  // da00 monitors
  std::vector<HistogramSink*> histogram_sinks_;                  // parallel to histograms_
  std::vector<Output> outputs_;                                  // per slot
  // NADC / MCASum without a division: (NADC · m[d]) >> 32 with m[d] = ceil(2^32 / d), exact for
  // every NADC < 2^24 and d in 1..255 (N-bit numerator, shift N + ceil(log2 d); checked for all
  // of them); m[0] = 2^32 keeps NADC when MCASum is 0 or normalisation is off.
  std::array<std::uint64_t, 256> nadc_divisor_{};
  std::array<std::uint64_t, kAcceptedNames.size()> accepted_{};  // this batch, per type
  std::array<Counter*, kAcceptedNames.size()> accepted_counters_{};
  Counter& published_;
  Counter& skipped_empty_;
  Counter& unpublished_no_pulse_;
};

}  // namespace efu::cbm
