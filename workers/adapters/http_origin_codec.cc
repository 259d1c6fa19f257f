// The origin side's HTTP/1.1 codec, for the tester playing an
// intermediary's origin servers (origin_listener.h): its directions are
// the clients' codec's flipped. Decode turns the requests the SUT sends
// into {method, path, headers, body} (http_parser.h; origin addresses in
// the target and header values mapped back to their names); Encode writes
// the tester's answer {status, headers, body} as a response to the oldest
// request not yet answered (HTTP/1.1 answers a connection in order): with
// `content-length` (none for 1xx, 204 and 304, whose bodies are empty),
// no body for a HEAD request, and `date: <now>` unless the answer has one
// (caches reckon a response's age from it: RFC 9111 §4.2.3). The
// connection is closed after answering a request that does not keep it
// (RFC 9112 §9.3, §9.6: "close", or HTTP/1.0 without "keep-alive").
#include <deque>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "workers/adapters/adapter.h"
#include "workers/adapters/http_fields.h"
#include "workers/adapters/http_parser.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

// The reason phrase of a status (informative only: RFC 9112 §4).
absl::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 412:
      return "Precondition Failed";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

class HttpOriginCodec : public Codec {
 public:
  explicit HttpOriginCodec(OriginNames names) : names_(std::move(names)), parser_(HttpParser::Kind::kRequest) {}

  absl::StatusOr<std::string> Encode(const Value& answer) override {
    const Value* status = answer.Find("status");
    if (status == nullptr || !status->is_int() || status->as_int() < 100 || status->as_int() > 599)
      return absl::InvalidArgumentError(
          absl::StrCat("an HTTP origin answer needs a \"status\" from 100 to 599: ", answer.ToString()));
    const int code = static_cast<int>(status->as_int());
    std::string body;
    if (const Value* b = answer.Find("body"); b != nullptr && b->is_string()) body = b->as_string();
    const Value* headers = answer.Find("headers");
    std::string out = absl::StrCat("HTTP/1.1 ", code, " ", ReasonPhrase(code), "\r\n");
    if (absl::Status s = AppendHeaderFields(headers, {"content-length", "transfer-encoding"}, names_, &out); !s.ok())
      return s;
    if (HeaderField(headers, "date") == nullptr)
      absl::StrAppend(&out, "date: ", absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", absl::Now(), absl::UTCTimeZone()),
                      "\r\n");
    const Pending request = heads_.empty() ? Pending{} : heads_.front();
    const bool head = request.head;
    ends_connection_ = false;
    if (code >= 200 && !heads_.empty()) {  // an interim answer leaves the request open
      heads_.pop_front();
      ends_connection_ = !request.persistent;
    }
    // Saying so lets the SUT stop sending on the connection (RFC 9112 §9.6).
    if (ends_connection_ && HeaderField(headers, "connection") == nullptr) out += "connection: close\r\n";
    if (code < 200 || code == 204 || code == 304) return absl::StrCat(out, "\r\n");
    absl::StrAppend(&out, "content-length: ", body.size(), "\r\n\r\n");
    if (!head) out += body;
    return out;
  }

  DecodeResult Decode(std::string* buf, bool eof, std::vector<Value>* out) override {
    const size_t before = out->size();
    DecodeResult r = parser_.Decode(buf, eof, out);
    for (size_t k = before; k < out->size(); ++k) {
      const Value* method = (*out)[k].Find("method");
      heads_.push_back({method != nullptr && method->as_string() == "HEAD", parser_.NextRequestPersistent()});
      (*out)[k] = WithNamesFromWire((*out)[k], names_);
    }
    return r;
  }

  std::unique_ptr<Codec> Clone() const override { return std::make_unique<HttpOriginCodec>(names_); }
  bool EndsConnection() const override { return ends_connection_; }

 private:
  // A request received and not yet answered.
  struct Pending {
    bool head = false;       // a HEAD: its answer has no body
    bool persistent = true;  // its connection stays open after the answer (RFC 9112 §9.3)
  };
  const OriginNames names_;
  HttpParser parser_;
  std::deque<Pending> heads_;     // per request received and not yet answered, oldest first
  bool ends_connection_ = false;  // the answer encoded last closes the connection
};

}  // namespace

std::unique_ptr<Codec> MakeHttpOriginCodec(OriginNames names) {
  return std::make_unique<HttpOriginCodec>(std::move(names));
}

}  // namespace dualswarm::workers
