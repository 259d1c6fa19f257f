#include "engine/harness/workloads.h"

namespace dualswarm::harness {
namespace {

using ir::Value;

const std::string& Pick(Rng& rng, const std::vector<std::string>& from) { return from[rng() % from.size()]; }

Value Rec(ir::MapEntries e) { return Value::Map(std::move(e)); }

}  // namespace

RequestFn KvRequests(std::vector<std::string> keys) {
  return [keys = std::move(keys)](Rng& rng) -> Value {
    static const std::vector<std::string> vals = {"x", "y", "z"};
    std::string key = Pick(rng, keys);
    switch (rng() % 4) {
      case 0: return Rec({{"op", Value::String("get")}, {"key", Value::String(key)}});
      case 1:
        return Rec({{"op", Value::String("put")}, {"key", Value::String(key)},
                    {"value", Value::String(Pick(rng, vals))}});
      case 2:
        return Rec({{"op", Value::String("append")}, {"key", Value::String(key)},
                    {"value", Value::String(Pick(rng, vals))}});
      default: {
        Value expected = rng() % 3 == 0 ? Value::Null() : Value::String(Pick(rng, vals));
        return Rec({{"op", Value::String("cas")}, {"key", Value::String(key)}, {"expected", expected},
                    {"value", Value::String(Pick(rng, vals))}});
      }
    }
  };
}

}  // namespace dualswarm::harness
