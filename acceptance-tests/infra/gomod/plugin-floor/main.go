// Command terraform-provider-floor is the plugin floor of the provider benchmark (docs/PERFORMANCE.md, issue 17):
// a Terraform provider built on terraform-plugin-framework, served over protocol 5 like modelfleet, with one
// resource, floor_item, of two string attributes and no I/O at all (create, read, update and delete touch nothing
// but Terraform's state). A plan of N floor_item measures what any plugin provider costs Terraform per resource
// (the gRPC calls and the plugin's process) next to terraform_data, which Terraform runs in its own process.
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func main() {
	err := providerserver.Serve(context.Background(), func() provider.Provider { return floorProvider{} },
		providerserver.ServeOpts{Address: "registry.terraform.io/modelfleet-bench/floor", ProtocolVersion: 5})
	if err != nil {
		log.Fatal(err)
	}
}

type floorProvider struct{}

func (floorProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "floor"
}

func (floorProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (floorProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (floorProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return item{} }}
}

func (floorProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// item is floor_item: `input` (required) and `id` (computed: the input at create).
type item struct{}

type itemModel struct {
	ID    types.String `tfsdk:"id"`
	Input types.String `tfsdk:"input"`
}

func (item) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_item"
}

func (item) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"input": schema.StringAttribute{Required: true},
	}}
}

func (item) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m itemModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	m.ID = m.Input
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (item) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m itemModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (item) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m itemModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (item) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
