// JSON-lines framing: one JSON object per line each way. A line that is not
// JSON becomes {"malformed": "..."} (the checker rejects it); the
// connection stays open.
#include "absl/strings/str_cat.h"
#include "engine/ir/json.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {
namespace {

constexpr size_t kMaxLine = 16 * 1024 * 1024;

class JsonLinesCodec : public Codec {
 public:
  absl::StatusOr<std::string> Encode(const ir::Value& q) override { return ir::ToJson(q) + "\n"; }

  void Decode(std::string* buf, bool eof, std::vector<ir::Value>* out, bool* close) override {
    size_t pos = 0;
    while (true) {
      size_t nl = buf->find('\n', pos);
      if (nl == std::string::npos) break;
      std::string line = buf->substr(pos, nl - pos);
      pos = nl + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      auto v = ir::ParseJson(line);
      if (v.ok()) {
        out->push_back(std::move(*v));
      } else {
        out->push_back(ir::Value::Map(
            {{"malformed", ir::Value::String(absl::StrCat("not JSON: ", v.status().message(), " in \"",
                                                          line.substr(0, 80), "\""))}}));
      }
    }
    buf->erase(0, pos);
    if (buf->size() > kMaxLine || (eof && !buf->empty())) {
      out->push_back(ir::Value::Map({{"malformed", ir::Value::String(
          eof ? "connection closed inside a line" : "line longer than 16 MiB")}}));
      buf->clear();
      *close = true;
    }
  }

  std::unique_ptr<Codec> Clone() const override { return std::make_unique<JsonLinesCodec>(); }
};

}  // namespace

std::unique_ptr<Codec> MakeJsonLinesCodec() { return std::make_unique<JsonLinesCodec>(); }

}  // namespace dualswarm::workers
