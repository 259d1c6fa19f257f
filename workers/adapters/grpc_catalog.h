// GrpcCatalog: the methods of the gRPC services a protobuf descriptor set
// describes (`protoc --descriptor_set_out=F --include_imports`), and the
// conversions between the tester's IR and their messages — no code
// generated per service (protobuf's DescriptorPool and DynamicMessage).
//
// Requests are the IR of protobuf's JSON mapping (field names as in the
// .proto or in lowerCamelCase; bytes in base64; enums by name or number).
// Responses become IR by reflection, close to the JSON mapping but meant
// for specs to compare (docs/adapters.md, "grpc"):
//   * every field is present, with its default when unset, except fields
//     with presence (message fields, oneof members, proto3 `optional`),
//     which are present only when set;
//   * 32- and 64-bit integers are IR ints (the JSON mapping's strings for
//     64-bit ones would make a revision uncomparable); a uint64 above
//     2^63-1 stays a decimal string;
//   * bytes are base64 strings, enums their value's name (the number when
//     the descriptor has no name for it), float and double decimal strings
//     (the IR has no fractions), maps IR maps keyed by the key's text.
#ifndef DUALSWARM_WORKERS_ADAPTERS_GRPC_CATALOG_H_
#define DUALSWARM_WORKERS_ADAPTERS_GRPC_CATALOG_H_

#include <memory>
#include <string>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/ir/value.h"

namespace dualswarm::workers {

// The largest descriptor set, request and response the adapter handles.
inline constexpr size_t kMaxDescriptorSetBytes = 16 << 20;
inline constexpr size_t kMaxGrpcMessageBytes = 16 << 20;

class GrpcCatalog {
 public:
  // `descriptor_set`: the bytes of a google.protobuf.FileDescriptorSet.
  // InvalidArgument when they do not parse or do not build (a file whose
  // imports are missing: build the set with --include_imports).
  static absl::StatusOr<std::unique_ptr<GrpcCatalog>> FromDescriptorSet(absl::string_view descriptor_set);

  // A unary method by its full name, "package.Service/Method" (a leading
  // '/' allowed). NotFound names the services the set has.
  absl::StatusOr<const google::protobuf::MethodDescriptor*> FindUnaryMethod(absl::string_view name) const;

  // The request message `body` (IR of the JSON mapping) as wire bytes.
  absl::StatusOr<std::string> EncodeRequest(const google::protobuf::MethodDescriptor& method,
                                            const ir::Value& body) const;

  // The response bytes as IR (see the top of this file); InvalidArgument
  // when they are not a valid message of the method's output type.
  absl::StatusOr<ir::Value> DecodeResponse(const google::protobuf::MethodDescriptor& method,
                                           absl::string_view bytes) const;

 private:
  GrpcCatalog() = default;

  google::protobuf::DescriptorPool pool_;
  std::string services_;  // "a.B, c.D": the services, for errors
  // Prototypes for the pool's message types; guarded by nothing: a
  // catalog is used by one thread (the adapter's).
  mutable google::protobuf::DynamicMessageFactory factory_{&pool_};
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_GRPC_CATALOG_H_
