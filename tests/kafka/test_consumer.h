// A librdkafka consumer for the integration tests: reads a topic from the beginning.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace efu::kafka::testing {

/// Reads every partition of `topic` from its first offset until `expected` messages arrived
/// and then `settle` passed without another one (to catch extra messages), or until `timeout`.
std::vector<std::string> consume(
    const std::string& bootstrap, const std::string& topic, std::size_t expected,
    std::chrono::milliseconds timeout,
    std::chrono::milliseconds settle = std::chrono::milliseconds(1000));

/// A topic name no earlier run used: "efutest_<pid>_<ns>_<suffix>".
std::string unique_topic(const std::string& suffix);

}  // namespace efu::kafka::testing
