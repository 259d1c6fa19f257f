#include "services/coordinator/http_gateway.h"

#include <civetweb.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/generic/generic_stub.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "dualswarm/v1/campaign.pb.h"
#include "dualswarm/v1/finding.pb.h"
#include "dualswarm/v1/run.pb.h"
#include "dualswarm/v1/spec.pb.h"
#include "dualswarm/v1/target.pb.h"
#include "proto/names/wire_names.h"
#include "services/coordinator/web_assets.h"

namespace dualswarm::coord {

namespace v1 = ::dualswarm::v1;
namespace pb = ::google::protobuf;

int HttpStatusOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::CANCELLED:
      return 499;
    case grpc::StatusCode::INVALID_ARGUMENT:
      return 400;
    case grpc::StatusCode::FAILED_PRECONDITION:
      return 400;
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
      return 409;
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    default:
      return 500;  // UNKNOWN, INTERNAL, DATA_LOSS
  }
}

namespace {

constexpr size_t kMaxTarget = 4096;  // path + query
constexpr size_t kMaxParams = 32;    // query parameters

std::string JsonEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through
        }
    }
  }
  return out;
}

HttpGateway::Response Error(grpc::StatusCode code, const std::string& message) {
  HttpGateway::Response r;
  r.status = HttpStatusOf(code);
  r.content_type = "application/json";
  r.body = absl::StrCat("{\"code\":\"", wire::StatusCodeName(code, "UNKNOWN"), "\",\"message\":\"", JsonEscape(message),
                        "\"}\n");
  return r;
}

// %XX (and in a query, '+') decoding of one URL component; false on a bad
// escape or a NUL byte (%00).
bool UrlDecode(absl::string_view in, std::string* out, bool plus_is_space = true) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '\0') return false;
    if (c == '+' && plus_is_space) {
      *out += ' ';
    } else if (c == '%') {
      if (i + 2 >= in.size() || !absl::ascii_isxdigit(in[i + 1]) || !absl::ascii_isxdigit(in[i + 2])) return false;
      int v = std::stoi(std::string(in.substr(i + 1, 2)), nullptr, 16);
      if (v == 0) return false;
      *out += static_cast<char>(v);
      i += 2;
    } else {
      *out += c;
    }
  }
  return true;
}

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code
// points past U+10FFFF): protobuf string fields must be, or the request
// cannot even be parsed by the service.
bool ValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (int k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

// ---------------------------------------------------------------- routes

// One API route: GET PATTERN -> gRPC METHOD. Pattern segments "{field}"
// fill that field of the request.
struct Route {
  std::string pattern;
  std::string method;  // "/dualswarm.v1.RunService/Get"
  std::function<std::unique_ptr<pb::Message>()> new_request;
  std::function<std::unique_ptr<pb::Message>()> new_response;
};

template <typename Req, typename Resp>
Route R(const char* pattern, const char* method) {
  return Route{pattern, method, [] { return std::make_unique<Req>(); }, [] { return std::make_unique<Resp>(); }};
}

// The API. One line per route; docs/web.md lists them.
const std::vector<Route>& Routes() {
  static const auto* routes = new std::vector<Route>{
      R<v1::ListRunsRequest, v1::ListRunsResponse>("/api/v1/runs", "/dualswarm.v1.RunService/List"),
      R<v1::GetRunRequest, v1::Run>("/api/v1/runs/{id}", "/dualswarm.v1.RunService/Get"),
      R<v1::ListJobsRequest, v1::ListJobsResponse>("/api/v1/runs/{run_id}/jobs", "/dualswarm.v1.RunService/ListJobs"),
      R<v1::GetRunCoverageRequest, v1::Coverage>("/api/v1/runs/{run_id}/coverage",
                                                 "/dualswarm.v1.RunService/GetCoverage"),
      R<v1::ListFindingsRequest, v1::ListFindingsResponse>("/api/v1/findings", "/dualswarm.v1.FindingService/List"),
      R<v1::GetFindingRequest, v1::Finding>("/api/v1/findings/{id}", "/dualswarm.v1.FindingService/Get"),
      R<v1::ListSpecsRequest, v1::ListSpecsResponse>("/api/v1/specs", "/dualswarm.v1.SpecService/List"),
      R<v1::GetSpecRequest, v1::Spec>("/api/v1/specs/{hash}", "/dualswarm.v1.SpecService/Get"),
      R<v1::ListTargetsRequest, v1::ListTargetsResponse>("/api/v1/targets", "/dualswarm.v1.TargetService/List"),
      R<v1::GetTargetRequest, v1::Target>("/api/v1/targets/{id}", "/dualswarm.v1.TargetService/Get"),
      R<v1::ListCampaignsRequest, v1::ListCampaignsResponse>("/api/v1/campaigns", "/dualswarm.v1.CampaignService/List"),
      R<v1::CampaignIdRequest, v1::Campaign>("/api/v1/campaigns/{id}", "/dualswarm.v1.CampaignService/Get"),
      R<v1::ListCampaignRunsRequest, v1::ListCampaignRunsResponse>("/api/v1/campaigns/{id}/runs",
                                                                   "/dualswarm.v1.CampaignService/ListRuns"),
      R<v1::CampaignIdRequest, v1::Coverage>("/api/v1/campaigns/{id}/coverage",
                                             "/dualswarm.v1.CampaignService/GetCoverage"),
  };
  return *routes;
}

// The route for `segments` and the values of its {fields}.
const Route* Match(const std::vector<std::string>& segments, std::vector<std::pair<std::string, std::string>>* params) {
  for (const Route& r : Routes()) {
    std::vector<std::string> pat = absl::StrSplit(r.pattern.substr(1), '/');
    if (pat.size() != segments.size()) continue;
    std::vector<std::pair<std::string, std::string>> got;
    bool ok = true;
    for (size_t i = 0; i < pat.size() && ok; ++i) {
      if (pat[i].size() > 2 && pat[i].front() == '{' && pat[i].back() == '}') {
        if (segments[i].empty()) ok = false;
        got.emplace_back(pat[i].substr(1, pat[i].size() - 2), segments[i]);
      } else {
        ok = pat[i] == segments[i];
      }
    }
    if (ok) {
      *params = std::move(got);
      return &r;
    }
  }
  return nullptr;
}

// Sets `name` (proto or JSON name) of `msg` from a text value: scalar
// fields only. An error names the parameter.
grpc::Status SetField(pb::Message* msg, const std::string& name, const std::string& value) {
  const pb::Descriptor* d = msg->GetDescriptor();
  const pb::FieldDescriptor* f = d->FindFieldByName(name);
  if (f == nullptr) f = d->FindFieldByCamelcaseName(name);
  auto bad = [&](const std::string& why) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, absl::StrCat("parameter \"", name, "\": ", why));
  };
  if (f == nullptr || f->is_repeated() || f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE)
    return bad(absl::StrCat("not a field of ", d->name()));
  const pb::Reflection* r = msg->GetReflection();
  // An integer field: `value` parsed as T (absl::SimpleAtoi), set by the
  // reflection setter `set`; `what` says which integers the field takes.
  auto integer = [&](auto type,
                     void (pb::Reflection::*set)(pb::Message*, const pb::FieldDescriptor*, decltype(type)) const,
                     const char* what) {
    decltype(type) v;
    if (!absl::SimpleAtoi(value, &v)) return bad(absl::StrCat("not ", what));
    (r->*set)(msg, f, v);
    return grpc::Status::OK;
  };
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return integer(int32_t{}, &pb::Reflection::SetInt32, "a 32-bit integer");
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return integer(int64_t{}, &pb::Reflection::SetInt64, "a 64-bit integer");
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return integer(uint32_t{}, &pb::Reflection::SetUInt32, "an unsigned 32-bit integer");
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return integer(uint64_t{}, &pb::Reflection::SetUInt64, "an unsigned 64-bit integer");
    case pb::FieldDescriptor::CPPTYPE_BOOL: {
      bool v;
      if (!absl::SimpleAtob(value, &v)) return bad("not true or false");
      r->SetBool(msg, f, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_STRING:
      if (!ValidUtf8(value)) return bad("not valid UTF-8");
      r->SetString(msg, f, value);
      break;
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumDescriptor* e = f->enum_type();
      const pb::EnumValueDescriptor* ev = e->FindValueByName(value);
      if (ev == nullptr) {
        // state=failed for RUN_STATE_FAILED: the suffix after "_".
        std::string suffix = absl::StrCat("_", absl::AsciiStrToUpper(value));
        absl::StrReplaceAll({{"-", "_"}}, &suffix);
        for (int i = 0; i < e->value_count() && ev == nullptr; ++i)
          if (value.size() > 0 && absl::EndsWith(e->value(i)->name(), suffix)) ev = e->value(i);
      }
      int number;
      if (ev == nullptr && absl::SimpleAtoi(value, &number)) {
        r->SetEnumValue(msg, f, number);  // the service validates unknown numbers
        break;
      }
      if (ev == nullptr) {
        std::string names;
        for (int i = 0; i < e->value_count(); ++i) absl::StrAppend(&names, i ? ", " : "", e->value(i)->name());
        return bad(absl::StrCat("not one of ", names));
      }
      r->SetEnum(msg, f, ev);
      break;
    }
    default:
      return bad("cannot be set from a URL");
  }
  return grpc::Status::OK;
}

// A blocking unary call of `method` over the generic stub.
grpc::Status Call(grpc::Channel* channel, const std::string& method, const pb::Message& request, pb::Message* response,
                  const std::string& authorization, int timeout_ms) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
  std::string bytes = request.SerializeAsString();
  grpc::Slice slice(bytes);
  grpc::ByteBuffer req(&slice, 1), resp;
  grpc::GenericStub stub(channel->shared_from_this());
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, method, grpc::StubOptions(), &req, &resp,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  grpc::Status st = done.get_future().get();
  if (!st.ok()) return st;
  grpc::Slice all;
  if (!resp.DumpToSingleSlice(&all).ok() || !response->ParseFromArray(all.begin(), static_cast<int>(all.size())))
    return grpc::Status(grpc::StatusCode::INTERNAL, "cannot parse the response of " + method);
  return grpc::Status::OK;
}

const char* ContentTypeOf(const std::string& path) {
  if (absl::EndsWith(path, ".html")) return "text/html; charset=utf-8";
  if (absl::EndsWith(path, ".js")) return "text/javascript; charset=utf-8";
  if (absl::EndsWith(path, ".css")) return "text/css; charset=utf-8";
  if (absl::EndsWith(path, ".svg")) return "image/svg+xml";
  if (absl::EndsWith(path, ".json")) return "application/json";
  if (absl::EndsWith(path, ".png")) return "image/png";
  if (absl::EndsWith(path, ".ico")) return "image/x-icon";
  return "application/octet-stream";
}

// A static file name: [A-Za-z0-9._-] segments, none starting with '.'.
bool SafeAssetPath(const std::string& path) {
  if (path.empty() || path.size() > 200) return false;
  for (absl::string_view seg : absl::StrSplit(path, '/')) {
    if (seg.empty() || seg[0] == '.') return false;
    for (char c : seg)
      if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

// Fills `req` from the path parameters already in `params` and the query:
// INVALID_ARGUMENT naming what is wrong; FAILED_PRECONDITION for a token in
// the URL (refused before anything else).
grpc::Status FillRequest(const std::string& query, std::vector<std::pair<std::string, std::string>>* params,
                         pb::Message* req) {
  auto invalid = [](const std::string& why) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, why); };
  if (!query.empty()) {
    std::vector<absl::string_view> pairs = absl::StrSplit(query, '&', absl::SkipEmpty());
    if (pairs.size() > kMaxParams) return invalid("too many query parameters");
    for (absl::string_view kv : pairs) {
      size_t eq = kv.find('=');
      std::string k, v;
      if (!UrlDecode(kv.substr(0, eq), &k) || !UrlDecode(eq == absl::string_view::npos ? "" : kv.substr(eq + 1), &v))
        return invalid("bad percent-escape or NUL (%00) in the query");
      if (k == "access_token")  // never accepted: tokens would end up in logs and history
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                            "send the token as \"Authorization: Bearer TOKEN\", not in the URL");
      params->emplace_back(std::move(k), std::move(v));
    }
  }
  for (const auto& [k, v] : *params)
    if (auto st = SetField(req, k, v); !st.ok()) return st;
  return grpc::Status::OK;
}

}  // namespace

// ---------------------------------------------------------------- gateway

HttpGateway::HttpGateway(std::shared_ptr<grpc::Channel> channel, Options options)
    : channel_(std::move(channel)), options_(std::move(options)) {}

HttpGateway::~HttpGateway() { Stop(); }

absl::Status HttpGateway::CheckListen(const std::string& at) {
  if (at.empty()) return absl::OkStatus();
  size_t colon = at.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 || !absl::SimpleAtoi(at.substr(colon + 1), &port) || port < 0 ||
      port > 65535 || at.find_first_of(", ") != std::string::npos)
    return absl::InvalidArgumentError(absl::StrCat("--http-listen: \"", at, "\" is not HOST:PORT"));
  return absl::OkStatus();
}

absl::StatusOr<int> HttpGateway::Start() {
  const std::string& at = options_.listen;
  if (auto st = CheckListen(at); !st.ok()) return st;
  mg_init_library(0);
  std::string threads = std::to_string(std::max(1, options_.threads));
  std::string timeout = std::to_string(std::max(100, options_.request_timeout_ms));
  const char* opts[] = {"listening_ports", at.c_str(), "num_threads", threads.c_str(), "request_timeout_ms",
                        timeout.c_str(), "max_request_size", "16384", "enable_keep_alive",
                        "no",  // one request per connection: simple, robust
                        // The path arrives as sent: decoding it here would end it at a %00
                        // ("/app.js%00.html" served app.js); Handle decodes and refuses NULs.
                        "decode_url", "no", nullptr};
  mg_callbacks callbacks{};
  // civetweb logs listen failures on stderr by default; keep them for the
  // status instead.
  callbacks.log_message = [](const mg_connection*, const char*) { return 1; };
  ctx_ = mg_start(&callbacks, this, opts);
  if (ctx_ == nullptr) return absl::UnavailableError(absl::StrCat("cannot serve HTTP on ", at, " (address in use?)"));
  mg_set_request_handler(ctx_, "/", &HttpGateway::OnRequest, this);
  mg_server_port ports[4];
  int n = mg_get_server_ports(ctx_, 4, ports);
  if (n < 1) {
    Stop();
    return absl::UnavailableError(absl::StrCat("cannot serve HTTP on ", at));
  }
  return ports[0].port;
}

void HttpGateway::Stop() {
  if (ctx_ != nullptr) {
    mg_stop(ctx_);
    ctx_ = nullptr;
  }
}

int HttpGateway::OnRequest(mg_connection* conn, void* self) {
  auto* gw = static_cast<HttpGateway*>(self);
  const mg_request_info* info = mg_get_request_info(conn);
  std::string method = info->request_method ? info->request_method : "";
  // civetweb hands over the path and the query as sent (decode_url=no).
  std::string target = info->local_uri_raw ? info->local_uri_raw : "";
  if (info->query_string != nullptr) absl::StrAppend(&target, "?", info->query_string);
  const char* auth = mg_get_header(conn, "Authorization");
  Response r = gw->Handle(method, target, auth ? auth : "");
  std::string head = absl::StrCat("HTTP/1.1 ", r.status, " ", mg_get_response_code_text(conn, r.status), "\r\n",
                                  "Content-Type: ", r.content_type, "\r\n", "Content-Length: ", r.body.size(), "\r\n",
                                  "X-Content-Type-Options: nosniff\r\n", "Referrer-Policy: no-referrer\r\n");
  for (const auto& [k, v] : r.headers) absl::StrAppend(&head, k, ": ", v, "\r\n");
  // One request per connection (enable_keep_alive is off), so a body we do
  // not read is never taken for the next request.
  absl::StrAppend(&head, "Connection: close\r\n\r\n");
  mg_write(conn, head.data(), head.size());
  if (method != "HEAD") mg_write(conn, r.body.data(), r.body.size());
  // civetweb's status for its access log / keep-alive decision.
  return r.status;
}

HttpGateway::Response HttpGateway::Handle(const std::string& method, const std::string& target,
                                          const std::string& authorization) {
  if (target.size() > kMaxTarget) return Error(grpc::StatusCode::INVALID_ARGUMENT, "request target too long");
  size_t q = target.find('?');
  std::string path = target.substr(0, q);
  std::string query = q == std::string::npos ? "" : target.substr(q + 1);
  if (path.empty() || path[0] != '/')
    return Error(grpc::StatusCode::INVALID_ARGUMENT, "request target must start with /");
  std::string raw_path = path;
  if (!UrlDecode(raw_path, &path, /*plus_is_space=*/false))
    return Error(grpc::StatusCode::INVALID_ARGUMENT, "bad percent-escape or NUL (%00) in the path");
  bool api = path == "/api" || absl::StartsWith(path, "/api/");
  if (method != "GET" && method != "HEAD") {
    Response r = Error(grpc::StatusCode::UNIMPLEMENTED, absl::StrCat("method ", method, " not allowed"));
    r.status = 405;
    r.headers["Allow"] = "GET, HEAD";
    return r;
  }
  if (api) return Api(path, query, authorization);
  return Static(path);
}

HttpGateway::Response HttpGateway::Api(const std::string& path, const std::string& query,
                                       const std::string& authorization) {
  std::vector<std::string> segments = absl::StrSplit(path.substr(1), '/');
  if (!segments.empty() && segments.back().empty()) segments.pop_back();  // trailing slash
  std::vector<std::pair<std::string, std::string>> params;
  const Route* route = Match(segments, &params);
  if (route == nullptr) return Error(grpc::StatusCode::NOT_FOUND, absl::StrCat("no API route ", path));
  std::unique_ptr<pb::Message> req = route->new_request();
  grpc::Status bad = FillRequest(query, &params, req.get());
  if (bad.error_code() == grpc::StatusCode::FAILED_PRECONDITION)  // a token in the URL: never used
    return Error(grpc::StatusCode::INVALID_ARGUMENT, bad.error_message());
  std::unique_ptr<pb::Message> resp = route->new_response();
  if (!bad.ok()) {
    // Authentication first: a caller the route would refuse learns nothing
    // about its parameters. The route's method with an empty request asks
    // the service's own token and role checks (every route only reads).
    grpc::Status auth =
        Call(channel_.get(), route->method, *route->new_request(), resp.get(), authorization, options_.call_timeout_ms);
    if (auth.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
        auth.error_code() == grpc::StatusCode::PERMISSION_DENIED || auth.error_code() == grpc::StatusCode::UNAVAILABLE)
      return Error(auth.error_code(), auth.error_message());
    return Error(bad.error_code(), bad.error_message());
  }
  grpc::Status st = Call(channel_.get(), route->method, *req, resp.get(), authorization, options_.call_timeout_ms);
  if (st.error_code() == grpc::StatusCode::UNIMPLEMENTED && st.error_message().empty())
    return Error(st.error_code(), absl::StrCat(route->method, " is not served by this coordinator"));
  if (!st.ok()) return Error(st.error_code(), st.error_message());
  Response r;
  r.content_type = "application/json";
  r.headers["Cache-Control"] = "no-store";
  pb::util::JsonPrintOptions jo;
  jo.always_print_primitive_fields = true;  // as `dualswarm --json`
  if (!pb::util::MessageToJsonString(*resp, &r.body, jo).ok())
    return Error(grpc::StatusCode::INTERNAL, "cannot print the response as JSON");
  r.body += "\n";
  return r;
}

HttpGateway::Response HttpGateway::Static(const std::string& url_path) {
  std::string path = url_path == "/" ? "index.html" : url_path.substr(1);
  if (!SafeAssetPath(path)) return Error(grpc::StatusCode::NOT_FOUND, "no such file");
  Response r;
  r.content_type = ContentTypeOf(path);
  r.headers["Cache-Control"] = "no-cache";
  // The UI loads only its own scripts and styles, and talks only to this server.
  r.headers["Content-Security-Policy"] =
      "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
      "object-src 'none'; base-uri 'none'; frame-ancestors 'none'";
  if (!options_.web_dir.empty()) {
    std::ifstream in(options_.web_dir + "/" + path, std::ios::binary);
    if (!in) return Error(grpc::StatusCode::NOT_FOUND, "no such file");
    std::stringstream ss;
    ss << in.rdbuf();
    r.body = ss.str();
    return r;
  }
  for (size_t i = 0; i < kWebAssetCount; ++i) {
    if (path == kWebAssets[i].path) {
      r.body.assign(reinterpret_cast<const char*>(kWebAssets[i].data), kWebAssets[i].size);
      return r;
    }
  }
  return Error(grpc::StatusCode::NOT_FOUND, "no such file");
}

}  // namespace dualswarm::coord
