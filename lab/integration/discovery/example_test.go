package discovery_test

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Two instances register; a client's provider picks them in turn, and
// follows one leaving.
func ExampleProvider() {
	ctx := context.Background()
	server, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer server.Close()
	client, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	reg, _ := discovery.New(server, "/examples/services")
	a, err := reg.Register(ctx, discovery.Instance{Name: "orders", ID: "a", Address: "10.0.0.1", Port: 8080})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := reg.Register(ctx, discovery.Instance{Name: "orders", ID: "b", Address: "10.0.0.2", Port: 8080})
	defer a.Leave(ctx)

	d, _ := discovery.New(client, "/examples/services")
	p, _ := d.NewProvider("orders") // round robin; sends nothing
	changes := p.Watch(ctx)         // loads the instances, then follows them
	defer changes.Stop()
	if _, ok := <-changes.C; !ok { // the first value: loaded
		fmt.Println(changes.Err())
		return
	}
	for range 3 {
		inst, _ := p.Pick()
		fmt.Println("picked", inst.ID, inst.Address)
	}
	_ = b.Leave(ctx)
	insts := <-changes.C // the provider has read the change
	fmt.Println(len(insts), "left")
	// Output:
	// picked a 10.0.0.1
	// picked b 10.0.0.2
	// picked a 10.0.0.1
	// 1 left
}

// Queries, and what a registration's node holds.
func ExampleDiscovery_Instance() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	d, _ := discovery.New(s, "/examples/query")
	r, err := d.Register(ctx, discovery.Instance{Name: "billing", ID: "b-1", Address: "10.0.0.9", Port: 9000, ServiceType: discovery.Static})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Leave(ctx)

	names, _ := d.Names(ctx)
	inst, _ := d.Instance(ctx, "billing", "b-1")
	data, st, _ := s.Conn().Get(r.Path())
	back, _ := discovery.Unmarshal(data)
	fmt.Println(names, r.Path(), inst.Address, inst.Port, inst.ServiceType)
	fmt.Println("persistent:", st.EphemeralOwner == 0, "same JSON:", back.Equal(inst))
	// Output:
	// [billing] /examples/query/billing/b-1 10.0.0.9 9000 STATIC
	// persistent: true same JSON: true
}
