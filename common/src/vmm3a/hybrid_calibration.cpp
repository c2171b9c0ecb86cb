#include "efu/vmm3a/hybrid_calibration.h"

#include <algorithm>

#include "efu/json_config.h"

namespace efu::vmm3a {
namespace {

// The reference starts every channel of every hybrid at offset 0 and slope 1 (VMM3Calibration's
// InitCal) and a file overwrites only the hybrids it names, so a hybrid the file leaves out keeps
// exactly these: its ADC passes unchanged and its TDC term is the nominal one.
constexpr ChannelCalibration kIdentity{0.0, 1.0, 0.0, 1.0};

void check_header(const JsonNode& root, const Hybrids& hybrids) {
  if (!root.is_object()) root.fail("is not an object; expected the calibration object");
  const JsonNode detector = root.at("Detector");
  if (detector.as_string() != hybrids.detector) {
    detector.fail("\"" + detector.as_string() + "\" is not the geometry's detector; expected \"" +
                  hybrids.detector + "\"");
  }
  const JsonNode version = root.at("Version");
  if (version.as_int(0, 1'000'000) != 1) version.fail("is not 1; expected version 1");
}

// One VMM's four arrays of 64 values into its 64 channels.
void load_vmm(const JsonNode& v, ChannelCalibration* channels) {
  if (!v.is_object()) v.fail("is not an object; expected one VMM's calibration");
  v.check_keys({"Settings", "adc_offset", "adc_slope", "tdc_offset", "tdc_slope"});
  double ChannelCalibration::*const fields[] = {
      &ChannelCalibration::adc_offset, &ChannelCalibration::adc_slope,
      &ChannelCalibration::tdc_offset, &ChannelCalibration::tdc_slope};
  const char* const keys[] = {"adc_offset", "adc_slope", "tdc_offset", "tdc_slope"};
  for (unsigned k = 0; k < 4; ++k) {
    const auto values = v.at(keys[k]).elements(kChannelsPerVmm, kChannelsPerVmm);
    for (std::uint32_t ch = 0; ch < kChannelsPerVmm; ++ch) {
      channels[ch].*fields[k] = values[ch].as_double(-1e6, 1e6);
    }
  }
}

// One Calibrations[] entry: its HybridId must be one of `hybrids` and not seen before (`seen` is
// then marked at its index), and its two VMMs are loaded into `channels`.
void load_entry(const JsonNode& entry, const Hybrids& hybrids, std::vector<std::uint8_t>& seen,
                std::vector<ChannelCalibration>& channels) {
  if (!entry.is_object()) entry.fail("is not an object; expected {\"VMMHybridCalibration\": ...}");
  entry.check_keys({"VMMHybridCalibration"});
  const JsonNode hybrid = entry.at("VMMHybridCalibration");
  if (!hybrid.is_object()) hybrid.fail("is not an object; expected a hybrid's calibration");
  // HybridIndex (NMX's files carry it) is informational: entries are matched by HybridId.
  hybrid.check_keys({"HybridId", "HybridIndex", "CalibrationDate", "vmm0", "vmm1"});
  const JsonNode id = hybrid.at("HybridId");
  const std::string& text = id.as_string();
  if (text.size() != kHybridIdLength) {
    id.fail("\"" + text + "\" has " + std::to_string(text.size()) + " characters; expected " +
            std::to_string(kHybridIdLength));
  }
  const auto found = std::find(hybrids.ids.begin(), hybrids.ids.end(), text);
  if (found == hybrids.ids.end()) {
    id.fail("\"" + text + "\" is not in the " + hybrids.origin + "; expected one of its HybridIds");
  }
  const auto index = static_cast<std::uint32_t>(found - hybrids.ids.begin());
  if (seen[index] != 0) id.fail("\"" + text + "\" is calibrated twice; expected each hybrid once");
  seen[index] = 1;
  hybrid.get_string("CalibrationDate");
  for (std::uint32_t vmm = 0; vmm < 2; ++vmm) {
    load_vmm(hybrid.at(vmm == 0 ? "vmm0" : "vmm1"),
             &channels[std::size_t{vmm_index(index, vmm)} * kChannelsPerVmm]);
  }
}

// "cassette 3", or "hybrid 3" when the plugin gave no names.
std::string name_of(const Hybrids& hybrids, std::uint32_t i) {
  return i < hybrids.names.size() ? hybrids.names[i] : "hybrid " + std::to_string(i);
}

// The hybrids no entry named, in the config's order; with kRefuse the first is an error.
std::vector<std::uint32_t> missing_hybrids(const JsonNode& list, const Hybrids& hybrids,
                                           const std::vector<std::uint8_t>& seen,
                                           MissingHybrids missing) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < hybrids.ids.size(); ++i) {
    if (seen[i] != 0) continue;
    if (missing == MissingHybrids::kRefuse) {
      list.fail("has no entry for HybridId \"" + hybrids.ids[i] + "\" (" + name_of(hybrids, i) +
                "); expected every hybrid of the instrument config, or --calibration off");
    }
    out.push_back(i);
  }
  return out;
}

void load(const JsonDocument& doc, const Hybrids& hybrids, MissingHybrids missing,
          std::vector<ChannelCalibration>& channels, std::vector<std::uint32_t>& uncalibrated) {
  const JsonNode root = doc.root();
  check_header(root, hybrids);
  channels.assign(hybrids.ids.size() * 2 * kChannelsPerVmm, kIdentity);
  std::vector<std::uint8_t> seen(hybrids.ids.size(), 0);
  const JsonNode list = root.at("Calibrations");
  for (const JsonNode& entry : list.elements()) load_entry(entry, hybrids, seen, channels);
  uncalibrated = missing_hybrids(list, hybrids, seen, missing);
}

}  // namespace

HybridCalibration HybridCalibration::from_file(const std::string& path, const Hybrids& hybrids,
                                               MissingHybrids missing) {
  HybridCalibration c;
  load(JsonDocument::from_file(path, hybrids.what), hybrids, missing, c.channels_, c.uncalibrated_);
  c.file_ = path;
  return c;
}

HybridCalibration HybridCalibration::from_json(std::string_view text, const std::string& origin,
                                               const Hybrids& hybrids, MissingHybrids missing) {
  HybridCalibration c;
  load(JsonDocument::from_text(text, hybrids.what, origin), hybrids, missing, c.channels_,
       c.uncalibrated_);
  c.file_ = origin;
  return c;
}

std::string HybridCalibration::uncalibrated_warning(std::string_view plugin,
                                                    const Hybrids& hybrids) const {
  if (uncalibrated_.empty()) return "";
  const std::size_t n = uncalibrated_.size();
  std::string line =
      std::string(plugin) + ": " + std::to_string(n) + " of " + std::to_string(hybrids.ids.size()) +
      (n == 1 ? " hybrids has" : " hybrids have") + " no calibration in '" + file_ +
      (n == 1 ? "' and runs" : "' and run") +
      " uncalibrated (ADC unchanged; TDC term with offset 0 and slope 1, as the "
      "reference does" +
      (hybrids.strict_option.empty() ? std::string()
                                     : "; " + hybrids.strict_option + " refuses the file") +
      "):";
  const char* separator = " ";
  for (const std::uint32_t i : uncalibrated_) {
    line += separator;
    line += name_of(hybrids, i) + " (HybridId " + hybrids.ids[i] + ")";
    separator = ", ";
  }
  return line;
}

}  // namespace efu::vmm3a
