// What the handlers of the coordinator's gRPC services share: the request
// checks (ids, page sizes, "exactly one of id and name"; OK or
// INVALID_ARGUMENT naming the field — the store validates what it keeps on
// top of these), the absl::Status -> grpc::Status mapping, and replying with
// a row (by id, or by id or name) or a page of rows converted by a
// proto_convert.h function.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICE_HANDLER_UTIL_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICE_HANDLER_UTIL_H_

#include <cstdint>
#include <string>

#include <google/protobuf/repeated_ptr_field.h>
#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

// absl::Status -> grpc::Status (the codes are numerically the same).
grpc::Status ToGrpc(const absl::Status& status);
grpc::Status Invalid(const std::string& msg);

// 0 (the store's default) to 500.
grpc::Status CheckPageSize(int32_t size);
// `what` must be a positive id.
grpc::Status CheckId(const char* what, int64_t id);
// Exactly one of a positive id and a name.
absl::Status CheckIdOrName(int64_t id, const std::string& name);
Page PageOf(int32_t size, const std::string& token);

// `row` converted into *out by `to_proto`, or its error.
template <typename Row, typename Proto>
grpc::Status ReplyWith(const absl::StatusOr<Row>& row, void (*to_proto)(const Row&, Proto*), Proto* out) {
  if (!row.ok()) return ToGrpc(row.status());
  to_proto(*row, out);
  return grpc::Status::OK;
}

// The row a request names by exactly one of a positive id and a name
// (CheckIdOrName), read with store->*by_id or store->*by_name and converted
// into *out by `to_proto`, or its error.
template <typename Row, typename Proto>
grpc::Status ReplyWithIdOrName(Store* store, absl::StatusOr<Row> (Store::*by_id)(int64_t),
                               absl::StatusOr<Row> (Store::*by_name)(const std::string&), int64_t id,
                               const std::string& name, void (*to_proto)(const Row&, Proto*), Proto* out) {
  if (auto st = CheckIdOrName(id, name); !st.ok()) return ToGrpc(st);
  return ReplyWith(id != 0 ? (store->*by_id)(id) : (store->*by_name)(name), to_proto, out);
}

// A page of rows converted into *items, with the next page's token, or its
// error.
template <typename Row, typename Proto>
grpc::Status ReplyWithPage(const absl::StatusOr<Listing<Row>>& list, void (*to_proto)(const Row&, Proto*),
                           google::protobuf::RepeatedPtrField<Proto>* items, std::string* next_page_token) {
  if (!list.ok()) return ToGrpc(list.status());
  for (const Row& r : list->items) to_proto(r, items->Add());
  *next_page_token = list->next;
  return grpc::Status::OK;
}

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICE_HANDLER_UTIL_H_
