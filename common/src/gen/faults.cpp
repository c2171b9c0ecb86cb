#include "efu/gen/faults.h"

#include <algorithm>
#include <sstream>

#include "efu/errors.h"

namespace efu::gen {

const char* fault_name(Fault kind) noexcept {
  switch (kind) {
    case Fault::kCookie:
      return "cookie";
    case Fault::kTruncated:
      return "truncated";
    case Fault::kVersion:
      return "version";
    case Fault::kType:
      return "type";
    case Fault::kCorrupt:
      return "corrupt";
    case Fault::kEmpty:
      return "empty";
    case Fault::kOversize:
      return "oversize";
  }
  return "?";
}

std::string fault_list(std::span<const Fault> accepted) {
  std::string out;
  for (const Fault kind : accepted) {
    if (!out.empty()) out += ',';
    out += fault_name(kind);
  }
  return out;
}

bool names_oversize(const std::string& list) {
  std::stringstream names(list);
  for (std::string name; std::getline(names, name, ',');) {
    if (name == fault_name(Fault::kOversize)) return true;
  }
  return false;
}

std::vector<Fault> parse_fault_kinds(const std::string& list, std::span<const Fault> accepted,
                                     double fraction) {
  std::vector<Fault> kinds;
  std::stringstream names(list);
  for (std::string name; std::getline(names, name, ',');) {
    const auto found = std::find_if(accepted.begin(), accepted.end(),
                                    [&](Fault kind) { return name == fault_name(kind); });
    if (found == accepted.end()) {
      // "expected a, b or c"
      std::string expected;
      for (std::size_t i = 0; i < accepted.size(); ++i) {
        if (i != 0) expected += i + 1 == accepted.size() ? " or " : ", ";
        expected += fault_name(accepted[i]);
      }
      throw ConfigError("--fault-kinds: '" + name + "' is not valid; expected " + expected);
    }
    kinds.push_back(*found);
  }
  if (fraction > 0 && kinds.empty()) {
    throw ConfigError("--fault-kinds: empty; expected at least one kind when --fault-fraction > 0");
  }
  return kinds;
}

std::optional<Fault> FaultInjector::draw(Random& rng) {
  if (!(fraction_ > 0 && rng.uniform(0, 1) < fraction_)) return std::nullopt;
  return kinds_[rng.below(kinds_.size())];
}

std::span<const std::uint8_t> FaultInjector::damage(Fault kind, std::span<const std::uint8_t> good,
                                                    Random& rng) {
  // Offsets in the ESS header (docs/architecture.md §5.1): 1 version, 2..4 the cookie "ESS", 5
  // the type.
  junk_.assign(good.begin(), good.end());
  switch (kind) {
    case Fault::kCookie:
      junk_[3] = 'X';
      break;
    case Fault::kVersion:
      junk_[1] = 5;
      break;
    case Fault::kType:
      junk_[5] = wrong_type_;
      break;
    case Fault::kTruncated:
      junk_.resize(1 + rng.below(junk_.size() - 1));
      break;
    case Fault::kEmpty:
      junk_.clear();
      break;
    case Fault::kOversize:
      junk_.resize(kOversizeBytes, 0xee);
      break;
    case Fault::kCorrupt:
      return good;  // not a header fault: the detector builds it (uncounted here)
  }
  ++counts_[fault_name(kind)];
  return junk_;
}

}  // namespace efu::gen
