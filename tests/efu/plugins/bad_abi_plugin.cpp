// Test plugin built for another plugin ABI: the host must refuse it and name both versions.
#include "efu/plugin.h"

namespace {
efu::Pipeline* create(const efu::PipelineContext&) { return nullptr; }
constexpr efu::PluginDescriptor kDescriptor{efu::kPluginAbiVersion + 41,
                                            "badabi",
                                            "1.0",
                                            "test plugin with a wrong ABI version",
                                            nullptr,
                                            0,
                                            create,
                                            nullptr};
}  // namespace

EFU_PLUGIN(kDescriptor)
