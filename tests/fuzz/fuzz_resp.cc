// libFuzzer target for the RESP2/RESP3 reply decoder (workers/adapters/
// resp_codec.cc). Input layout as in codec_splits.h (byte 0: the close with
// the last bytes, split points; then the server's bytes); bit 2 of byte 0
// sends HELLO 3 first, so RESP3's types are read. Feeding the bytes in
// those pieces must give the same replies, and the same decision to close,
// as feeding them all at once; every reply must be one typed value
// ({"str"|"bulk"|"err"|"double"|"bignum": string}, {"int": int},
// {"nil": true}, {"bool": bool}, {"verbatim": {"format", "text"}},
// {"arr"|"set": [...]}, {"map": [[k, v], ...]}) nested no deeper than the
// codec's bound; nothing may crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "engine/ir/value.h"
#include "tests/fuzz/codec_splits.h"
#include "workers/adapters/adapter.h"

namespace {

using dualswarm::ir::Value;

// One of the IR shapes docs/adapters.md lists, arrays at most `depth` deep.
bool Typed(const Value& v, int depth) {
  if (!v.is_map() || v.as_map().size() != 1) return false;
  const auto& [tag, inner] = v.as_map()[0];
  if (tag == "str" || tag == "bulk" || tag == "err" || tag == "double" || tag == "bignum") return inner.is_string();
  if (tag == "int") return inner.is_int();
  if (tag == "nil") return inner.is_bool() && inner.as_bool();
  if (tag == "bool") return inner.is_bool();
  if (tag == "verbatim")
    return inner.is_map() && inner.as_map().size() == 2 && inner.Find("format") && inner.Find("text");
  if ((tag != "arr" && tag != "set" && tag != "map") || !inner.is_list() || depth == 0) return false;
  for (const Value& e : inner.as_list()) {
    if (tag != "map") {
      if (!Typed(e, depth - 1)) return false;
    } else if (!e.is_list() || e.as_list().size() != 2 || !Typed(e.as_list()[0], depth - 1) ||
               !Typed(e.as_list()[1], depth - 1)) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<dualswarm::workers::Codec> codec = dualswarm::workers::MakeRespCodec();
  static const Value kHello3 = Value::Map({{"cmd", Value::List({Value::String("HELLO"), Value::String("3")})}});
  bool resp3 = size > 0 && (data[0] & 4) != 0;
  dualswarm::fuzz::Decoded d = dualswarm::fuzz::CheckSplitsAgree(*codec, data, size, resp3 ? &kHello3 : nullptr);
  for (const Value& v : d.responses) {
    if (!Typed(v, 64)) {
      std::fprintf(stderr, "fuzz_resp: a reply that is no typed value: %s\n", v.ToString().c_str());
      std::abort();
    }
  }
  return 0;
}
