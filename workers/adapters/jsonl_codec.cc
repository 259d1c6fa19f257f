// JSON-lines framing: one JSON value per line each way (a trailing \r is
// dropped, empty lines are skipped). A line that is not JSON, a line longer
// than kMaxLineBytes, or a line cut off by the peer closing is reported as
// malformed (out of band) and ends the connection.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ir/json.h"
#include "workers/adapters/adapter.h"
#include "workers/adapters/printable_sample.h"

namespace dualswarm::workers {
namespace {

constexpr size_t kMaxLineBytes = 16 * 1024 * 1024;

class JsonLinesCodec : public Codec {
 public:
  absl::StatusOr<std::string> Encode(const ir::Value& q) override { return ir::ToJson(q) + "\n"; }

  DecodeResult Decode(std::string* buf, bool eof, std::vector<ir::Value>* out) override {
    DecodeResult result;
    size_t pos = 0;
    while (result.malformed.empty()) {
      // Bytes before scanned_ were already searched for a newline.
      size_t nl = buf->find('\n', std::max(pos, scanned_));
      if (nl == std::string::npos) break;
      scanned_ = 0;
      absl::string_view line(buf->data() + pos, nl - pos);
      pos = nl + 1;
      if (line.size() > kMaxLineBytes) {  // as when it arrives in pieces
        result.malformed = TooLong(line);
        break;
      }
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      auto v = ir::ParseJson(line);
      if (v.ok()) {
        out->push_back(std::move(*v));
      } else {
        result.malformed = absl::StrCat("not JSON: ", v.status().message(), " (bytes: ", PrintableSample(line), ")");
      }
    }
    buf->erase(0, pos);
    if (result.malformed.empty()) {
      if (buf->size() > kMaxLineBytes) {
        result.malformed = TooLong(*buf);
      } else if (eof && !buf->empty()) {
        result.malformed = absl::StrCat("connection closed inside a line (bytes: ", PrintableSample(*buf), ")");
      }
    }
    scanned_ = buf->size();
    if (!result.malformed.empty()) {
      buf->clear();
      scanned_ = 0;
      result.close = true;
    }
    return result;
  }

  std::unique_ptr<Codec> Clone() const override { return std::make_unique<JsonLinesCodec>(); }

 private:
  static std::string TooLong(absl::string_view line) {
    return absl::StrCat("a line longer than ", kMaxLineBytes, " bytes (bytes: ", PrintableSample(line), ")");
  }

  size_t scanned_ = 0;  // a prefix of the pending buffer known to hold no newline
};

}  // namespace

std::unique_ptr<Codec> MakeJsonLinesCodec() { return std::make_unique<JsonLinesCodec>(); }

}  // namespace dualswarm::workers
