// The clients' HTTP/1.1 codec: request IR {method, path, headers, body} ->
// bytes; bytes -> response IR {status, headers, body} (http_parser.h).
// A path in origin-form ("/x") is sent with `host` the target's address.
// A path in absolute-form ("http://origin-0/x", for a forward proxy: RFC
// 9112 §3.2.2) names one of the tester's origin endpoints (origin_names.h):
// it is sent with that endpoint's address, and `host` is the IR's own
// `host` header when it has one (so a test can see the proxy replace it),
// else that address. Responses to HEAD have no body.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "workers/adapters/adapter.h"
#include "workers/adapters/http_fields.h"
#include "workers/adapters/http_parser.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

// The authority of an absolute-form target ("http://A/..." -> "A"); empty
// for origin-form.
absl::string_view AuthorityOf(absl::string_view target) {
  constexpr absl::string_view kScheme = "http://";
  if (!absl::StartsWithIgnoreCase(target, kScheme)) return {};
  absl::string_view rest = target.substr(kScheme.size());
  return rest.substr(0, rest.find_first_of("/?#"));
}

class HttpCodec : public Codec {
 public:
  HttpCodec(std::string host, OriginNames names)
      : host_(std::move(host)), names_(std::move(names)), parser_(HttpParser::Kind::kResponse) {}

  absl::StatusOr<std::string> Encode(const Value& q) override {
    const Value* method = q.Find("method");
    const Value* path = q.Find("path");
    if (method == nullptr || !method->is_string() || !IsHttpToken(method->as_string()))
      return absl::InvalidArgumentError(absl::StrCat("HTTP request needs a \"method\" token: ", q.ToString()));
    if (path == nullptr || !path->is_string() || path->as_string().empty() ||
        path->as_string().find_first_of(" \r\n") != std::string::npos)
      return absl::InvalidArgumentError(absl::StrCat("HTTP request needs a \"path\" without spaces: ", q.ToString()));
    const std::string target = names_.ToWire(path->as_string());
    const Value* headers = q.Find("headers");
    std::string host = host_;
    if (absl::string_view authority = AuthorityOf(target); !authority.empty()) {
      const Value* own = HeaderField(headers, "host");
      host = own != nullptr ? names_.ToWire(own->as_string()) : std::string(authority);
    }
    if (host.find_first_of("\r\n") != std::string::npos)
      return absl::InvalidArgumentError("header host contains a line break");
    std::string body;
    if (const Value* b = q.Find("body"); b != nullptr && b->is_string()) body = b->as_string();
    std::string out = absl::StrCat(method->as_string(), " ", target, " HTTP/1.1\r\nhost: ", host, "\r\n");
    if (absl::Status s = AppendHeaderFields(headers, {"host", "content-length", "transfer-encoding"}, names_, &out);
        !s.ok())
      return s;
    const std::string& m = method->as_string();
    parser_.RequestSent(m == "HEAD");
    // Every third request with a body goes chunked (two chunks), so servers'
    // both framings get exercised; the IR the checker sees is the same.
    if (body.size() >= 2 && ++bodies_sent_ % 3 == 0) {
      size_t half = body.size() / 2;
      absl::StrAppend(&out, "transfer-encoding: chunked\r\n\r\n", absl::Hex(half), "\r\n", body.substr(0, half), "\r\n",
                      absl::Hex(body.size() - half), "\r\n", body.substr(half), "\r\n0\r\n\r\n");
      return out;
    }
    if (!body.empty() || m == "PUT" || m == "POST") absl::StrAppend(&out, "content-length: ", body.size(), "\r\n");
    absl::StrAppend(&out, "\r\n", body);
    return out;
  }

  DecodeResult Decode(std::string* buf, bool eof, std::vector<Value>* out) override {
    const size_t before = out->size();
    DecodeResult r = parser_.Decode(buf, eof, out);
    for (size_t k = before; k < out->size(); ++k) (*out)[k] = WithNamesFromWire((*out)[k], names_);
    return r;
  }

  std::unique_ptr<Codec> Clone() const override { return std::make_unique<HttpCodec>(host_, names_); }

 private:
  const std::string host_;
  const OriginNames names_;
  uint64_t bodies_sent_ = 0;
  HttpParser parser_;
};

}  // namespace

std::unique_ptr<Codec> MakeHttpCodec(std::string host_header, OriginNames names) {
  return std::make_unique<HttpCodec>(std::move(host_header), std::move(names));
}

}  // namespace dualswarm::workers
