// libFuzzer target for the response decoders of the HTTP, JSON-lines and
// memcached codecs (workers/adapters/adapter.h Codec::Decode). Input layout:
//   byte 0: bits 0 and 2 = codec (bit 2 set: memcached; else bit 0: 0 HTTP,
//           1 JSON lines); bit 1 = the peer's close
//           arrives with the last bytes (else in a call of its own);
//           bits 4-7 = number of split points N
//   bytes 1..N: the lengths of the first N pieces (0-255 bytes each)
//   the rest: the bytes the server sends.
// Feeding the bytes in those pieces must give the same responses, and the
// same decision to close, as feeding them all at once; nothing may crash.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/ir/value.h"
#include "workers/adapters/adapter.h"

namespace {

using dualswarm::ir::Value;
namespace workers = dualswarm::workers;

struct Decoded {
  std::vector<Value> responses;
  bool closed = false;
  // Why the bytes were malformed, without the quoted bytes (which show what
  // happened to be buffered, so they depend on the split).
  std::string malformed;
};

std::string WhyMalformed(const std::string& malformed) { return malformed.substr(0, malformed.find(" (bytes: ")); }

Decoded Feed(const workers::Codec& proto, absl::string_view bytes, const std::vector<size_t>& pieces,
             bool eof_with_last) {
  std::unique_ptr<workers::Codec> codec = proto.Clone();
  Decoded d;
  std::vector<Value> out;
  std::string buf;
  size_t pos = 0;
  for (size_t i = 0; i < pieces.size() && !d.closed; ++i) {
    buf.append(bytes.data() + pos, pieces[i]);
    pos += pieces[i];
    bool eof = eof_with_last && i + 1 == pieces.size();
    workers::DecodeResult r = codec->Decode(&buf, eof, &out);
    d.closed = r.close;
    d.malformed = WhyMalformed(r.malformed);
  }
  if (!eof_with_last && !d.closed) {
    workers::DecodeResult r = codec->Decode(&buf, true, &out);
    d.closed = r.close;
    d.malformed = WhyMalformed(r.malformed);
  }
  d.responses = std::move(out);
  return d;
}

std::string Describe(const Decoded& d) {
  std::string s = d.closed ? "closed;" : "open;";
  if (!d.malformed.empty()) s += " malformed: " + d.malformed + ";";
  for (const Value& v : d.responses) s += " " + v.ToString();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  uint8_t flags = data[0];
  size_t n = std::min<size_t>(flags >> 4, size - 1);
  absl::string_view bytes(reinterpret_cast<const char*>(data) + 1 + n, size - 1 - n);
  std::vector<size_t> pieces;
  size_t left = bytes.size();
  for (size_t i = 0; i < n; ++i) {
    size_t len = std::min<size_t>(data[1 + i], left);
    pieces.push_back(len);
    left -= len;
  }
  pieces.push_back(left);

  std::unique_ptr<workers::Codec> codec = (flags & 4)   ? workers::MakeMemcachedCodec()
                                          : (flags & 1) ? workers::MakeJsonLinesCodec()
                                                        : workers::MakeHttpCodec("fuzz");
  bool eof_with_last = (flags & 2) != 0;
  Decoded whole = Feed(*codec, bytes, {bytes.size()}, eof_with_last);
  Decoded split = Feed(*codec, bytes, pieces, eof_with_last);
  if (whole.closed != split.closed || whole.malformed != split.malformed || whole.responses != split.responses) {
    std::fprintf(stderr, "fuzz_codec: split feeding differs from whole feeding\n  whole: %s\n  split: %s\n",
                 Describe(whole).c_str(), Describe(split).c_str());
    std::abort();
  }
  return 0;
}
