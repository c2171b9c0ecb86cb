// The command port's request/reply protocol, compatible with the reference EFU's (its efushell
// scripts are clients). Pure: one request's bytes in, one reply out; no sockets, no state
// besides what it reads. docs/operations.md states the protocol byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ops/latest_stats.h"

namespace efu {

/// What a request amounted to; the command port counts the malformed ones and acts on kExit.
enum class RequestOutcome : std::uint8_t {
  kOk,
  kExit,        // EXIT: the reply is "<OK>", then efu stops as on SIGTERM
  kBadCommand,  // "Error: <BADCMD>": no words, or an unknown command
  kBadArgs,     // "Error: <BADARGS>": wrong number of arguments or a malformed one
  kTooLong,     // "Error: <BADSIZE>": more than kMaxRequestBytes
};

struct CommandReply {
  std::string text;  // sent as is: no trailing newline
  RequestOutcome outcome;
};

/// The fixed words of the VERSION_GET reply. efubriefstat.py unpacks exactly seven words, so
/// every field is one non-empty word (spaces become '_', empty becomes "unknown").
struct BuildIdentity {
  std::string version;    // "0.1.0"
  std::string date;       // "2026-11-22" (configure time)
  std::string time;       // "11:15:17"
  std::string host_user;  // "buildhost:builder"
  std::string kernel;     // "6.1.0-18-amd64" (uname -r of the build host)
  std::string git_hash;   // "3d4f622"
};

/// The build this binary came from (compile definitions set by efu/CMakeLists.txt).
BuildIdentity this_build();

class CommandProtocol {
 public:
  /// A request is what one read returned; longer ones are refused with "Error: <BADSIZE>".
  static constexpr std::size_t kMaxRequestBytes = 1024;

  /// `stat_prefix` is prepended to counter names ("efu.freia.0."); `detector` is the
  /// DETECTOR_INFO_GET word (the module name).
  CommandProtocol(const LatestStats& stats, std::string stat_prefix, std::string detector,
                  const BuildIdentity& build);

  CommandReply handle(std::string_view request) const;

  /// Every command, in CMD_GET order (sorted by name, as the reference lists them).
  static std::span<const std::string_view> commands();

 private:
  struct Command;
  /// Every command with its arguments and its answer, in kCommands' (CMD_GET) order.
  static std::span<const Command> table();

  CommandReply stat_get(std::string_view index) const;
  CommandReply stat_get_name(std::string_view name) const;
  CommandReply runtime_stats() const;

  const LatestStats& stats_;
  std::string stat_prefix_;
  std::string detector_;
  std::string version_reply_;
};

/// Bits of the RUNTIMESTATS mask: a stage is "up" when its counter grew over the last interval.
inline constexpr std::uint32_t kRuntimeReceiving = 1u << 0;   // receive.packets
inline constexpr std::uint32_t kRuntimeProcessing = 1u << 1;  // process.packets
inline constexpr std::uint32_t kRuntimeEvents = 1u << 2;      // ev44.events or events.discarded

}  // namespace efu
