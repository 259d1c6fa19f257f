// SpecService (proto/dualswarm/v1/spec.proto): specs uploaded, read and
// validated. An upload is checked (size, no NUL, the file name on one line)
// and must load before it is stored; versions are content-addressed.
#include "services/coordinator/service/grpc_services.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "engine/lang/limits.h"
#include "services/coordinator/proto_convert.h"
#include "services/coordinator/service/handler_util.h"
#include "services/coordinator/service/state.h"
#include "services/coordinator/spec_check.h"

namespace dualswarm::coord {
namespace {

// The checks a spec upload passes before it is loaded (Create, Validate):
// size, and no NUL anywhere (the store keeps text as C strings) nor line
// breaks in the file name.
grpc::Status CheckSpecRequest(const std::string& source, const std::string& file_name) {
  if (source.size() > lang::kMaxSpecSourceBytes) return Invalid(lang::kSpecSourceTooLarge);
  if (file_name.size() > 255) return Invalid("file_name exceeds 255 bytes");
  if (auto st = CheckText("source", source, false); !st.ok()) return ToGrpc(st);
  if (auto st = CheckText("file_name", file_name, true); !st.ok()) return ToGrpc(st);
  return grpc::Status::OK;
}

std::string FileNameOf(const std::string& given) { return given.empty() ? "spec.dspec" : given; }

class SpecService final : public ServiceWithState<v1::SpecService::Service> {
 public:
  using ServiceWithState::ServiceWithState;

  grpc::Status Create(grpc::ServerContext* ctx, const v1::CreateSpecRequest* req,
                      v1::CreateSpecResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckSpecRequest(req->source(), req->file_name()); !st.ok()) return st;
    std::string file = FileNameOf(req->file_name());
    SpecCheck check = CheckSpec(file, req->source());
    if (!check.valid) return Invalid(absl::StrCat("the spec does not load:\n", check.ErrorText()));
    bool created = false;
    auto row = state_->store()->PutSpec(check.name, file, req->source(), check.choice_sites, &created, check.gens,
                                        check.origin_role);
    if (!row.ok()) return ToGrpc(row.status());
    SpecToProto(*row, resp->mutable_spec());
    resp->mutable_spec()->clear_source();
    resp->set_created(created);
    return grpc::Status::OK;
  }

  grpc::Status Get(grpc::ServerContext* ctx, const v1::GetSpecRequest* req, v1::Spec* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (req->hash().empty() == req->name().empty()) return Invalid("give exactly one of hash and name");
    return ReplyWith(
        req->hash().empty() ? state_->store()->GetLatestSpec(req->name()) : state_->store()->GetSpec(req->hash()),
        SpecToProto, resp);
  }

  grpc::Status List(grpc::ServerContext* ctx, const v1::ListSpecsRequest* req, v1::ListSpecsResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
    return ReplyWithPage(state_->store()->ListSpecs(req->name(), PageOf(req->page_size(), req->page_token())),
                         SpecToProto, resp->mutable_specs(), resp->mutable_next_page_token());
  }

  grpc::Status Validate(grpc::ServerContext* ctx, const v1::ValidateSpecRequest* req,
                        v1::ValidateSpecResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckSpecRequest(req->source(), req->file_name()); !st.ok()) return st;
    SpecCheck check = CheckSpec(FileNameOf(req->file_name()), req->source());
    resp->set_valid(check.valid);
    for (const auto& e : check.errors) {
      v1::SpecError* pe = resp->add_errors();
      pe->set_file(e.file);
      pe->set_line(e.line);
      pe->set_column(e.column);
      pe->set_message(e.message);
    }
    if (check.valid) {
      resp->set_name(check.name);
      resp->set_hash(Sha256Hex(req->source()));
      resp->set_choice_sites(check.choice_sites);
    }
    return grpc::Status::OK;
  }
};

}  // namespace

std::unique_ptr<grpc::Service> MakeSpecService(ServiceState* state) { return std::make_unique<SpecService>(state); }

}  // namespace dualswarm::coord
