#include "ops/command_protocol.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <vector>

// Set by efu/CMakeLists.txt for this file only, at configure time.
#ifndef EFU_VERSION
#define EFU_VERSION "0.0.0"
#endif
#ifndef EFU_BUILD_DATE
#define EFU_BUILD_DATE ""
#endif
#ifndef EFU_BUILD_TIME
#define EFU_BUILD_TIME ""
#endif
#ifndef EFU_BUILD_HOST_USER
#define EFU_BUILD_HOST_USER ""
#endif
#ifndef EFU_BUILD_KERNEL
#define EFU_BUILD_KERNEL ""
#endif
#ifndef EFU_GIT_HASH
#define EFU_GIT_HASH ""
#endif

namespace efu {
namespace {

constexpr std::array<std::string_view, 11> kCommands = {
    "CALIB_MODE_GET",    "CALIB_MODE_SET", "CMD_GET",      "CMD_GET_COUNT",
    "DETECTOR_INFO_GET", "EXIT",           "RUNTIMESTATS", "STAT_GET",
    "STAT_GET_COUNT",    "STAT_GET_NAME",  "VERSION_GET"};
static_assert(std::is_sorted(kCommands.begin(), kCommands.end()),
              "CMD_GET numbers the commands in sorted order");

constexpr std::string_view kSeparators{" \t\r\n\0", 5};

const CommandReply kBadCommand{"Error: <BADCMD>", RequestOutcome::kBadCommand};
const CommandReply kBadArgs{"Error: <BADARGS>", RequestOutcome::kBadArgs};
const CommandReply kTooLong{"Error: <BADSIZE>", RequestOutcome::kTooLong};

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t pos = text.find_first_not_of(kSeparators);
  while (pos != std::string_view::npos) {
    const std::size_t end = text.find_first_of(kSeparators, pos);
    words.push_back(text.substr(pos, end == std::string_view::npos ? end : end - pos));
    pos = end == std::string_view::npos ? end : text.find_first_not_of(kSeparators, end);
  }
  return words;
}

/// An optionally signed decimal integer. Out-of-range magnitudes saturate (they are then out of
/// range for every index); anything else that is not a number is malformed.
bool parse_integer(std::string_view text, std::int64_t& out) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  std::uint64_t magnitude = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude);
  (void)ptr;
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (ec == std::errc::result_out_of_range || magnitude > kMax) magnitude = kMax;
  out = negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
  return true;
}

CommandReply ok(std::string text) { return {std::move(text), RequestOutcome::kOk}; }

CommandReply cmd_get(std::string_view index) {
  std::int64_t i = 0;
  if (!parse_integer(index, i) || i < 1 || i > static_cast<std::int64_t>(kCommands.size())) {
    return kBadArgs;
  }
  return ok("CMD_GET " + std::string(kCommands[static_cast<std::size_t>(i - 1)]));
}

// efu has no calibration mode: switching it off is a no-op, switching it on is refused.
CommandReply calib_mode_set(std::string_view mode_text) {
  std::int64_t mode = 0;
  if (!parse_integer(mode_text, mode) || mode != 0) return kBadArgs;
  return ok("<OK>");
}

std::string one_word(std::string text) {
  if (text.empty()) return "unknown";
  for (char& c : text) {
    if (kSeparators.find(c) != std::string_view::npos) c = '_';
  }
  return text;
}

}  // namespace

BuildIdentity this_build() {
  return {EFU_VERSION,         EFU_BUILD_DATE,   EFU_BUILD_TIME,
          EFU_BUILD_HOST_USER, EFU_BUILD_KERNEL, EFU_GIT_HASH};
}

std::span<const std::string_view> CommandProtocol::commands() { return kCommands; }

CommandProtocol::CommandProtocol(const LatestStats& stats, std::string stat_prefix,
                                 std::string detector, const BuildIdentity& build)
    : stats_(stats),
      stat_prefix_(std::move(stat_prefix)),
      detector_(one_word(std::move(detector))) {
  // The reference's layout: version, then "date time [host:user] [kernel] hash".
  version_reply_ = "VERSION_GET " + one_word(build.version) + " " + one_word(build.date) + " " +
                   one_word(build.time) + " [" + one_word(build.host_user) + "] [" +
                   one_word(build.kernel) + "] " + one_word(build.git_hash);
}

// One command of the protocol: how many arguments it takes and how it is answered. A plain
// function pointer, so that the table is a constant built at compile time.
struct CommandProtocol::Command {
  std::string_view name;
  bool takes_argument;  // exactly one; the others take none
  CommandReply (*reply)(const CommandProtocol& self, std::string_view argument);
};

std::span<const CommandProtocol::Command> CommandProtocol::table() {
  using Self = const CommandProtocol&;
  using Arg = std::string_view;
  static constexpr std::array<Command, kCommands.size()> kTable{{
      {"CALIB_MODE_GET", false, [](Self, Arg) { return ok("CALIB_MODE_GET 0"); }},
      {"CALIB_MODE_SET", true, [](Self, Arg mode) { return calib_mode_set(mode); }},
      {"CMD_GET", true, [](Self, Arg index) { return cmd_get(index); }},
      {"CMD_GET_COUNT", false,
       [](Self, Arg) { return ok("CMD_GET_COUNT " + std::to_string(kCommands.size())); }},
      {"DETECTOR_INFO_GET", false,
       [](Self self, Arg) { return ok("DETECTOR_INFO_GET " + self.detector_); }},
      {"EXIT", false,
       [](Self, Arg) {
         return CommandReply{"<OK>", RequestOutcome::kExit};
       }},
      {"RUNTIMESTATS", false, [](Self self, Arg) { return self.runtime_stats(); }},
      {"STAT_GET", true, [](Self self, Arg index) { return self.stat_get(index); }},
      {"STAT_GET_COUNT", false,
       [](Self self, Arg) {
         return ok("STAT_GET_COUNT " + std::to_string(self.stats_.latest()->counters.size()));
       }},
      {"STAT_GET_NAME", true, [](Self self, Arg name) { return self.stat_get_name(name); }},
      {"VERSION_GET", false, [](Self self, Arg) { return ok(self.version_reply_); }},
  }};
  static_assert(std::ranges::equal(kTable, kCommands, {}, &Command::name),
                "the table lists kCommands, in the same order");
  return kTable;
}

CommandReply CommandProtocol::handle(std::string_view request) const {
  if (request.size() > kMaxRequestBytes) return kTooLong;
  const std::vector<std::string_view> words = split_words(request);
  if (words.empty()) return kBadCommand;
  const std::span<const Command> commands = table();
  const auto command = std::ranges::find(commands, words[0], &Command::name);
  if (command == commands.end()) return kBadCommand;
  if (words.size() != (command->takes_argument ? 2u : 1u)) return kBadArgs;
  return command->reply(*this, command->takes_argument ? words[1] : std::string_view{});
}

CommandReply CommandProtocol::stat_get(std::string_view index) const {
  std::int64_t i = 0;
  if (!parse_integer(index, i)) return kBadArgs;
  const auto snapshot = stats_.latest();
  const auto& counters = snapshot->counters;
  if (i < 1 || i > static_cast<std::int64_t>(counters.size())) {
    return ok("STAT_GET  -1");  // the reference's reply: an empty name and -1
  }
  const RateSample& c = counters[static_cast<std::size_t>(i - 1)];
  return ok("STAT_GET " + stat_prefix_ + c.name + " " + std::to_string(c.value));
}

CommandReply CommandProtocol::stat_get_name(std::string_view name) const {
  const auto snapshot = stats_.latest();
  // The reference looks up the short name ("main.uptime"); the full name works too.
  std::string_view short_name = name;
  if (short_name.size() > stat_prefix_.size() && short_name.starts_with(stat_prefix_)) {
    short_name.remove_prefix(stat_prefix_.size());
  }
  std::string value = "-1";
  for (const RateSample& c : snapshot->counters) {
    if (c.name == name || c.name == short_name) {
      value = std::to_string(c.value);
      break;
    }
  }
  return ok("STAT_GET_NAME " + std::string(name) + " " + value);
}

CommandReply CommandProtocol::runtime_stats() const {
  const auto snapshot = stats_.latest();
  std::uint32_t mask = 0;
  for (const RateSample& c : snapshot->counters) {
    if (c.kind != CounterKind::kCounter || c.rate_per_s <= 0) continue;
    if (c.name == "receive.packets") mask |= kRuntimeReceiving;
    if (c.name == "process.packets") mask |= kRuntimeProcessing;
    if (c.name == "ev44.events" || c.name == "events.discarded") mask |= kRuntimeEvents;
  }
  return ok("RUNTIMESTATS " + std::to_string(mask));
}

}  // namespace efu
