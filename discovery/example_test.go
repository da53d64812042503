package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// A service registers itself; its node lives as long as the process (and
// comes back after a lost session) until it unregisters. The examples that
// need a ZooKeeper server are compiled but not run by go test
// (lab/integration/discovery runs its own against a real ensemble).
func ExampleDiscovery_Register() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	d, err := discovery.New(s, "/services") // Curator's basePath; sends nothing
	if err != nil {
		log.Fatal(err)
	}
	// A payload a Java service typed on com.example.Details can read.
	payload, err := discovery.JavaPayload("com.example.Details", map[string]any{"zone": "eu-1"})
	if err != nil {
		log.Fatal(err)
	}
	uri, _ := discovery.ParseURISpec("{scheme}://{address}:{port}/v1")
	reg, err := d.Register(ctx, discovery.Instance{
		Name: "orders", ID: "orders-7", Address: "10.0.0.7", Port: 8080,
		Payload: payload, URISpec: uri, // ServiceType Dynamic, RegistrationTime now
	}) // 1 exists + 1 create + 1 exists: /services/orders/orders-7, ephemeral, kept by a persistent.Node
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Leave(ctx) // 1 exists + 1 delete

	if present := reg.Present(); present.Err() != nil { // sends nothing
		// Session lost or node deleted: it is being created again, and
		// Present returns a new context once it is back.
		log.Print("orders-7 may be unlisted: ", context.Cause(present))
	}

	// Draining: Curator's providers (and ours) skip a disabled instance.
	inst := reg.Instance()
	inst.Disabled = true
	if err := reg.Update(ctx, inst); err != nil { // 1 setData
		log.Fatal(err)
	}
}

// A client picks an instance for each call from a cache that follows the
// registrations, and notes the instances that fail.
func ExampleProvider() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	d, err := discovery.New(s, "/services")
	if err != nil {
		log.Fatal(err)
	}
	p, err := d.NewProvider("orders", discovery.WithStrategy(discovery.Sticky(discovery.Random()))) // sends nothing
	if err != nil {
		log.Fatal(err)
	}
	// Watch loads (1 getChildren + 1 getData per instance, with watches)
	// and follows until Stop; its first value says the load is done.
	changes := p.Watch(ctx)
	defer changes.Stop()
	if _, ok := <-changes.C; !ok {
		log.Fatal(changes.Err())
	}
	for range 3 {
		inst, err := p.Pick() // sends nothing
		if errors.Is(err, discovery.ErrNoInstances) {
			log.Print("no orders service up")
			return
		}
		if err != nil {
			log.Fatal(err)
		}
		url := inst.URISpec.Build(inst, nil)
		if err := call(url); err != nil {
			p.NoteError(inst.ID) // two within 30 s: skipped for 30 s
		}
	}
}

func call(string) error { return nil }

// Queries without a cache.
func ExampleDiscovery_Instances() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	d, _ := discovery.New(s, "/services")
	names, err := d.Names(ctx) // 1 getChildren
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range names {
		insts, err := d.Instances(ctx, name) // 1 getChildren + 1 getData each
		if err != nil {
			log.Fatal(err)
		}
		for _, inst := range insts {
			var details struct {
				Zone string `json:"zone"`
			}
			_ = inst.DecodePayload(&details) // "@class" is an ordinary field here
			fmt.Println(name, inst.ID, inst.Address, inst.Port, details.Zone)
		}
	}
}

// The JSON is Curator's; Marshal and Unmarshal need no server.
func ExampleMarshal() {
	uri, _ := discovery.ParseURISpec("{scheme}://{address}:{port}")
	b, _ := discovery.Marshal(discovery.Instance{Name: "api", ID: "a-1", Address: "10.0.0.1", Port: 80,
		ServiceType: discovery.Static, URISpec: uri})
	fmt.Println(string(b))
	inst, _ := discovery.Unmarshal(b)
	fmt.Println(inst.URISpec.Build(inst, nil))
	// Output:
	// {"name":"api","id":"a-1","address":"10.0.0.1","port":80,"sslPort":null,"payload":null,"registrationTimeUTC":0,"serviceType":"STATIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},{"value":"port","variable":true}]}}
	// http://10.0.0.1:80
}

// A payload Curator wrote for a Java Long, and one for a Java object.
func ExampleInstance_DecodePayload() {
	for _, raw := range []string{
		`{"name":"api","id":"n","payload":["java.lang.Long",12345678901]}`,
		`{"name":"api","id":"d","payload":{"@class":"com.example.Details","zone":"eu-1"}}`,
	} {
		inst, err := discovery.Unmarshal([]byte(raw))
		if err != nil {
			log.Fatal(err)
		}
		var v any
		if err := inst.DecodePayload(&v); err != nil {
			log.Fatal(err)
		}
		fmt.Println(inst.PayloadClass(), v)
	}
	// Output:
	// java.lang.Long 1.2345678901e+10
	// com.example.Details map[@class:com.example.Details zone:eu-1]
}
