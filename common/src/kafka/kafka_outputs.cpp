// Placeholder until the Kafka outputs land; replaced wholesale by the Kafka implementation.
#include "efu/errors.h"
#include "efu/outputs.h"

namespace efu {

std::unique_ptr<Outputs> make_kafka_outputs(const OutputSettings& settings, CounterRegistry&) {
  throw ConfigError("--broker: '" + settings.broker +
                    "' cannot be used yet, Kafka outputs are not built; expected 'none'");
}

}  // namespace efu
