#include "services/coordinator/service/handler_util.h"

#include "absl/strings/str_cat.h"

namespace dualswarm::coord {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

grpc::Status Invalid(const std::string& msg) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, msg); }

grpc::Status CheckPageSize(int32_t size) {
  if (size < 0 || size > 500) return Invalid("page_size must be between 0 and 500");
  return grpc::Status::OK;
}

grpc::Status CheckId(const char* what, int64_t id) {
  if (id <= 0) return Invalid(absl::StrCat(what, " must be a positive id"));
  return grpc::Status::OK;
}

absl::Status CheckIdOrName(int64_t id, const std::string& name) {
  if ((id == 0) == name.empty()) return absl::InvalidArgumentError("give exactly one of id and name");
  if (id < 0) return absl::InvalidArgumentError("id must be positive");
  return absl::OkStatus();
}

Page PageOf(int32_t size, const std::string& token) {
  Page p;
  p.size = size;
  p.after = token;
  return p;
}

}  // namespace dualswarm::coord
