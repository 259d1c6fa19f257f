// The coordinator's HTTP gateway: a JSON view of the gRPC API for browsers
// and scripts, and the web UI's static files (web/), on one HTTP port.
//
//   GET /api/v1/runs?state=failed        -> RunService.List, as JSON
//   GET /api/v1/runs/7                   -> RunService.Get {id: 7}
//   GET /                                -> web/index.html (and its assets)
//
// Every API route is a gRPC method of the coordinator itself, called over an
// in-process channel (grpc::Server::InProcessChannel): the same handlers,
// token checks, validation, interceptors (RPC metrics) and error codes as a
// gRPC client gets. Path segments ({id}) and query parameters fill fields of
// the request message by name (proto or lowerCamel JSON name; enums by full
// name, by the part after the type prefix — state=failed — or by number);
// the response is the protobuf JSON mapping of the response message, the
// same schema as `dualswarm ... --json`. The Authorization header is passed
// on as the "authorization" metadata. Errors are {"code": "NOT_FOUND",
// "message": "..."} with the HTTP status of the gRPC code (docs/web.md).
//
// The server is civetweb (Debian's libcivetweb-dev): a fixed pool of worker
// threads, request heads of at most 16 KiB, a request timeout, GET and HEAD
// only (bodies are never read; a request with one closes the connection).
// Static files come from a copy of web/ compiled into the binary, or from a
// directory on disk (Options::web_dir, for editing the UI without a rebuild).
#ifndef DUALSWARM_SERVICES_COORDINATOR_HTTP_GATEWAY_H_
#define DUALSWARM_SERVICES_COORDINATOR_HTTP_GATEWAY_H_

#include <map>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"

struct mg_context;
struct mg_connection;

namespace dualswarm::coord {

class HttpGateway {
 public:
  struct Options {
    std::string listen = "127.0.0.1:7421";  // HOST:PORT (port 0: any free port)
    std::string web_dir;                    // serve web/ from here; empty: the compiled-in copy
    int threads = 4;                        // requests served at once
    int request_timeout_ms = 10000;         // a request (head) must arrive within this
    int call_timeout_ms = 30000;            // deadline of the gRPC call behind an API request
  };

  // One HTTP response.
  struct Response {
    int status = 200;
    std::string content_type;
    std::string body;
    std::map<std::string, std::string> headers;  // extra headers
  };

  // `channel` reaches the coordinator's gRPC services (in-process).
  HttpGateway(std::shared_ptr<grpc::Channel> channel, Options options);
  ~HttpGateway();  // stops the server
  HttpGateway(const HttpGateway&) = delete;
  HttpGateway& operator=(const HttpGateway&) = delete;

  // Whether `listen` is HOST:PORT (empty: off, fine) — INVALID_ARGUMENT
  // naming --http-listen otherwise.
  static absl::Status CheckListen(const std::string& listen);

  // Starts listening; returns the port. UNAVAILABLE if it cannot listen,
  // INVALID_ARGUMENT for a malformed address.
  absl::StatusOr<int> Start();
  // Stops accepting and waits for requests in flight. Idempotent.
  void Stop();

  // Answers one request (what the server does per request; public for
  // tests). `target` is the path and an optional "?query", both as sent
  // (percent-decoded here; an encoded NUL is refused).
  Response Handle(const std::string& method, const std::string& target, const std::string& authorization);

 private:
  static int OnRequest(mg_connection* conn, void* self);
  Response Api(const std::string& path, const std::string& query, const std::string& authorization);
  Response Static(const std::string& path);

  std::shared_ptr<grpc::Channel> channel_;
  Options options_;
  mg_context* ctx_ = nullptr;
};

// The HTTP status for a gRPC code (the mapping grpc-gateway uses).
int HttpStatusOf(grpc::StatusCode code);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_HTTP_GATEWAY_H_
