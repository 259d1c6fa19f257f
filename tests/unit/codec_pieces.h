// Test helper for codecs (workers/adapters): decode bytes fed in pieces of
// any size and describe what came out, so a test can check that every split
// decodes like the whole.
#ifndef DUALSWARM_TESTS_UNIT_CODEC_PIECES_H_
#define DUALSWARM_TESTS_UNIT_CODEC_PIECES_H_

#include <string>
#include <vector>

#include "engine/ir/json.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {

// What one Decode call makes of `bytes` (with `eof`), and its result.
inline std::vector<ir::Value> Decode(Codec& c, std::string bytes, bool eof, DecodeResult* result) {
  std::vector<ir::Value> out;
  *result = c.Decode(&bytes, eof, &out);
  return out;
}

// Everything `proto` (cloned) makes of `bytes` fed in pieces of `piece`
// bytes (0: at once), then EOF: the responses as JSON lines, then
// "MALFORMED why" (without the quoted bytes, which show what had arrived).
// `request`, when given, is encoded first (a codec whose replies depend on
// what the connection sent, e.g. RESP3 after HELLO 3).
inline std::string DecodeInPieces(const Codec& proto, const std::string& bytes, size_t piece,
                                  const ir::Value* request = nullptr) {
  auto c = proto.Clone();
  if (request != nullptr && !c->Encode(*request).ok()) return "REQUEST REFUSED";
  std::string buf, log;
  std::vector<ir::Value> out;
  DecodeResult r;
  size_t step = piece == 0 ? bytes.size() : piece;
  for (size_t at = 0; at < bytes.size() && r.malformed.empty() && !r.close; at += step) {
    buf.append(bytes, at, step);
    r = c->Decode(&buf, false, &out);
  }
  if (r.malformed.empty() && !r.close) r = c->Decode(&buf, true, &out);
  for (const ir::Value& v : out) log += ir::ToJson(v) + "\n";
  if (!r.malformed.empty()) log += "MALFORMED " + r.malformed.substr(0, r.malformed.find(" (bytes: "));
  return log;
}

}  // namespace dualswarm::workers

#endif  // DUALSWARM_TESTS_UNIT_CODEC_PIECES_H_
