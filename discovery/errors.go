package discovery

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package discovery. Errors from this package wrap them,
// or the recipes sentinels (recipes.ErrNilSession, recipes.ErrInvalidPath,
// recipes.ErrDataTooLarge, recipes.ErrBadArgument, recipes.ErrClosed), or
// go-zookeeper's errors, so that errors.Is reaches all of them.
var (
	// ErrNilReceiver: a method was called on a nil *Discovery,
	// *Registration or *Provider.
	ErrNilReceiver = fmt.Errorf("discovery: nil receiver: %w", recipes.ErrBadArgument)
	// ErrInvalidInstance: Register or Update was given an instance that
	// cannot be registered (an empty or unusable name or id, a port out of
	// range, a service type other than Dynamic, Static or Permanent, a
	// payload a Curator reader would fail on, an Extra field named like a
	// known one, a name or id that Update may not change). Nothing was
	// sent. It also wraps recipes.ErrInvalidPath (a name or id that is not
	// a node name) or recipes.ErrBadArgument (the rest).
	ErrInvalidInstance = errors.New("discovery: invalid instance")
	// ErrMalformed: a node's data is not an instance's JSON (Unmarshal,
	// Discovery.Instance).
	ErrMalformed = errors.New("discovery: malformed instance")
	// ErrNotFound: Discovery.Instance found no node for the name and id.
	// It also wraps zk.ErrNoNode.
	ErrNotFound = errors.New("discovery: instance not found")
	// ErrAlreadyRegistered: Register was called for a name and id that
	// this Discovery already registers (update that Registration instead).
	ErrAlreadyRegistered = errors.New("discovery: already registered")
	// ErrUnregistered: Update or Leave on a Registration that was
	// unregistered.
	ErrUnregistered = errors.New("discovery: unregistered")
	// ErrNoInstances: a Provider has no usable instance to pick (none
	// registered, or every one disabled, filtered out or noted down).
	ErrNoInstances = errors.New("discovery: no instances")
	// ErrProviderClosed: a Provider stopped: the Stream of its Watch
	// ended (the error also wraps why, if not ctx or Stop), or it was
	// watched before.
	ErrProviderClosed = errors.New("discovery: provider closed")
)
