#include "cbm_pipeline.h"

#include <spdlog/spdlog.h>

#include "efu/plugin_files.h"

namespace efu::cbm {
namespace {
// The source tree's and the installed configs/ (efu_add_plugin(cbm ... CONFIGS configs)).
constexpr ShippedFiles kShipped{EFU_PLUGIN_CONFIGS_SOURCE, EFU_PLUGIN_CONFIGS_INSTALLED};

std::size_t type_index(MonitorType t) noexcept { return static_cast<std::size_t>(t) - 1; }
}  // namespace

const OptionSpec kOptions[] = {
    {"geometry", OptionType::kString, "",
     "The facility's beam-monitor config JSON (Detector \"CBM\", or \"BEER\"; docs/cbm.md): its "
     "Topology names each monitor's source; empty: the shipped configs/cbm.json"},
};
const std::size_t kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);

std::string shipped_config_path(const std::string& name) { return kShipped.path(name); }

CbmSettings settings_from_options(const OptionValues& o) {
  return CbmSettings{geometry_file(o, kShipped, "cbm.json")};
}

std::unique_ptr<CbmShared> load_shared(CbmSettings settings) {
  CbmConfig config = load_config_file(settings.config_path);
  SlotTable slots(config);
  return std::make_unique<CbmShared>(
      CbmShared{std::move(settings), std::move(config), std::move(slots)});
}

std::unique_ptr<CbmShared> make_shared(CbmConfig config) {
  SlotTable slots(config);
  return std::make_unique<CbmShared>(CbmShared{{}, std::move(config), std::move(slots)});
}

da00::TofHistogramSpec histogram_spec(const Monitor& m) noexcept {
  return da00::TofHistogramSpec{m.max_tof_bin, m.bin_count, m.aggregated_frames,
                                m.aggregation == AggregationMode::kAverage
                                    ? da00::Aggregation::average
                                    : da00::Aggregation::sum,
                                "A"};
}

std::uint32_t route_key(const PacketView&) noexcept { return 0; }

CbmPipeline::CbmPipeline(const CbmShared& shared, const PipelineContext& context)
    : CbmPipeline(nullptr, &shared, context) {}

CbmPipeline::CbmPipeline(const CbmSettings& settings, const PipelineContext& context)
    : CbmPipeline(load_shared(settings), nullptr, context) {}

CbmPipeline::CbmPipeline(std::unique_ptr<const CbmShared> own, const CbmShared* shared,
                         const PipelineContext& context)
    : own_(std::move(own)),
      shared_(shared != nullptr ? *shared : *own_),
      header_(context.counters, ess::HeaderSettings{detector_type(shared_.config.instrument),
                                                    shared_.config.max_pulse_time_diff_ns}),
      parser_(context.counters, shared_.config, shared_.slots),
      published_(context.counters.counter("histograms.published")),
      skipped_empty_(context.counters.counter("histograms.skipped_empty")),
      unpublished_no_pulse_(context.counters.counter("histograms.unpublished_no_pulse")) {
  for (std::size_t i = 0; i < kAcceptedNames.size(); ++i) {
    accepted_counters_[i] =
        &context.counters.counter(std::string("readouts.accepted.") + kAcceptedNames[i]);
  }
  for (std::size_t d = 0; d < nadc_divisor_.size(); ++d) {
    const bool divide = shared_.config.normalize_ibm && d != 0;
    nadc_divisor_[d] = divide ? ((std::uint64_t{1} << 32) + d - 1) / d : std::uint64_t{1} << 32;
  }
  bind_outputs(context);
  if (context.instance == 0 && context.instances > 1) {
    spdlog::warn(
        "cbm: every packet goes to processing thread 0 of the {} (one ring feeds every "
        "monitor's stream); run it with --processing-threads 1",
        context.instances);
  }
}

// Each monitor's source, from the host (one stream per Source name across threads).
void CbmPipeline::bind_outputs(const PipelineContext& context) {
  for (const Monitor& m : shared_.config.monitors) {
    Output out{m.type, m.schema, m.pixel_offset, m.width, nullptr, nullptr, nullptr};
    if (m.schema == Schema::kDa00) {
      histograms_.push_back(std::make_unique<da00::TofHistogram>(histogram_spec(m)));
      histogram_sinks_.push_back(&histogram_source(context, m.source));
      out.histogram = histograms_.back().get();
      out.histogram_sink = histogram_sinks_.back();
    } else {
      buffers_.push_back(std::make_unique<EventBuffer>(event_source(context, m.source)));
      out.events = buffers_.back().get();
    }
    outputs_.push_back(out);
  }
}

void CbmPipeline::process(PacketBatch batch) {
  for (const PacketView& packet : batch) process_packet(packet);
  for (const auto& buffer : buffers_) buffer->flush();
  for (std::size_t i = 0; i < accepted_.size(); ++i) {
    if (accepted_[i] != 0) accepted_counters_[i]->add(accepted_[i]);
    accepted_[i] = 0;
  }
}

void CbmPipeline::process_packet(const PacketView& packet) noexcept {
  ess::PacketHeader header{};
  const ess::HeaderStatus status = header_.parse(packet.data, packet.size, header);
  if (status == ess::HeaderStatus::kRejected) return;
  // Every histogram follows the packets' pulse, as the reference's processMonitorReadouts sets
  // each serializer's reference time per packet: a change ends a frame (and maybe a window).
  // Heartbeats carry a pulse too, so a window closes while its monitor is quiet.
  for (std::size_t i = 0; i < histograms_.size(); ++i) {
    histograms_[i]->set_pulse(header.pulse_time_ns, *histogram_sinks_[i]);
  }
  if (status != ess::HeaderStatus::kData) return;
  parser_.parse(header, packet.data + header.header_size, packet.size - header.header_size,
                [this](const CheckedReadout& c) { on_readout(c); });
}

// What each type publishes (docs/cbm.md):
//   EVENT_0D  ev44: pixel = PixelOffset             da00: value 1 at the TOF
//   EVENT_2D  ev44: pixel = 1 + x + Width·y + PixelOffset
//   IBM       ev44: pixel = NADC (normalised)       da00: value NADC (normalised) at the TOF
// with NADC normalised = NADC / MCASum when NormalizeIBMReadouts and MCASum != 0.
// Worked example, 2D 512 × 512 with PixelOffset 1024: x 3, y 2 → 1 + 3 + 1024 + 1024 = 2052.
// Inlined into the parser's loop: it runs once per readout.
[[gnu::always_inline]] inline void CbmPipeline::on_readout(const CheckedReadout& c) noexcept {
  const Output& out = outputs_[static_cast<std::size_t>(c.slot)];
  const CbmReadout& r = c.readout;
  std::uint32_t value = 1;
  if (out.type == MonitorType::kEvent0D) {
    value = out.schema == Schema::kEv44 ? out.pixel_offset : 1;
  } else if (out.type == MonitorType::kEvent2D) {
    value = 1 + r.x() + std::uint32_t{out.width} * r.y() + out.pixel_offset;
  } else {
    value =
        static_cast<std::uint32_t>((std::uint64_t{r.nadc()} * nadc_divisor_[r.mca_sum()]) >> 32);
  }
  if (out.schema == Schema::kDa00) {
    add_to_histogram(out, c.tof.tof_ns, static_cast<std::int32_t>(value));
    return;
  }
  // The TOF is at most 2^31 - 1 ns (effective_max_tof_ns()), so it fits ev44's field.
  out.events->add(c.tof.pulse_ns, static_cast<std::uint32_t>(c.tof.tof_ns), value);
  ++accepted_[type_index(out.type)];
}

// The reference adds a readout's TOF (from the pulse before the packet's, for a readout earlier
// than the packet's pulse) to the histogram of the packet's pulse: so does efu.
[[gnu::always_inline]] inline void CbmPipeline::add_to_histogram(const Output& out,
                                                                 std::uint64_t tof_ns,
                                                                 std::int32_t value) noexcept {
  switch (out.histogram->add(static_cast<std::int64_t>(tof_ns), value)) {
    case da00::TofHistogram::Add::added:
      ++accepted_[type_index(out.type)];
      return;
    case da00::TofHistogram::Add::before_offset:
      parser_.errors()[ReadoutError::kTofBeforeOffset].add();
      return;
    case da00::TofHistogram::Add::beyond_period:
      parser_.errors()[ReadoutError::kTofBeyondPeriod].add();
      return;
  }
}

// Each instance sets its own counters to its histograms' totals; the registry sums instances.
void CbmPipeline::update_histogram_counters() noexcept {
  std::uint64_t published = 0;
  std::uint64_t skipped = 0;
  std::uint64_t unpublished = 0;
  for (const auto& h : histograms_) {
    published += h->published();
    skipped += h->skipped_empty();
    unpublished += h->unpublished_no_pulse();
  }
  published_.set(published);
  skipped_empty_.set(skipped);
  unpublished_no_pulse_.set(unpublished);
}

void CbmPipeline::tick(std::uint64_t now_ns) {
  (void)now_ns;  // nothing waits on wall time: windows close on pulse changes
  update_histogram_counters();
}

void CbmPipeline::flush() {
  for (const auto& buffer : buffers_) buffer->flush();
  for (std::size_t i = 0; i < histograms_.size(); ++i) {
    histograms_[i]->flush(*histogram_sinks_[i]);
  }
  update_histogram_counters();
}

}  // namespace efu::cbm
