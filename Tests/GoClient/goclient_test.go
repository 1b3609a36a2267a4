// Flint's own tests through Google's Go client (cloud.google.com/go/firestore), which speaks
// gRPC through grpc-go: an HTTP/2 stack other than the C core the Python client uses.
// scripts/go-client-tests.sh runs them against a Flint started by `flint exec`.
package goclient

import (
	"context"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var client *firestore.Client

func TestMain(m *testing.M) {
	if os.Getenv("FIRESTORE_EMULATOR_HOST") == "" {
		fmt.Fprintln(os.Stderr, "FIRESTORE_EMULATOR_HOST is not set: these tests need a running Flint")
		os.Exit(2)
	}
	c, err := firestore.NewClient(context.Background(), "flint-go-client")
	if err != nil {
		fmt.Fprintln(os.Stderr, "NewClient:", err)
		os.Exit(2)
	}
	client = c
	code := m.Run()
	c.Close()
	os.Exit(code)
}

// collection gives each test a collection of its own, so reruns on one server do not meet.
func collection(t *testing.T) *firestore.CollectionRef {
	return client.Collection(fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()))
}

func wantCode(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if status.Code(err) != want {
		t.Fatalf("%s: got %v, want code %s", what, err, want)
	}
}

func ids(t *testing.T, it *firestore.DocumentIterator) []string {
	t.Helper()
	docs, err := it.GetAll()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Ref.ID
	}
	return out
}

func TestConcurrentTransactionsCountEveryIncrement(t *testing.T) {
	ctx := context.Background()
	counter := collection(t).Doc("counter")
	if _, err := counter.Set(ctx, map[string]interface{}{"n": 0}); err != nil {
		t.Fatal(err)
	}
	const workers, each = 3, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				errs <- client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
					snap, err := tx.Get(counter)
					if err != nil {
						return err
					}
					n, err := snap.DataAt("n")
					if err != nil {
						return err
					}
					return tx.Update(counter, []firestore.Update{{Path: "n", Value: n.(int64) + 1}})
				}, firestore.MaxAttempts(50))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal("transaction:", err)
		}
	}
	snap, err := counter.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := snap.DataAt("n"); n != int64(workers*each) {
		t.Fatalf("counter is %v after %d committed increments", n, workers*each)
	}
}

func TestEveryValueTypeRoundTrips(t *testing.T) {
	ctx := context.Background()
	coll := collection(t)
	ref := coll.Doc("target")
	at := time.Date(2026, 11, 26, 8, 30, 15, 123456000, time.UTC)
	data := map[string]interface{}{
		"null":    nil,
		"true":    true,
		"minInt":  int64(math.MinInt64),
		"maxInt":  int64(math.MaxInt64),
		"pi":      3.25,
		"inf":     math.Inf(-1),
		"text":    "café ☕ 😀",
		"bytes":   []byte{0, 1, 254, 255},
		"at":      at,
		"where":   &latlng.LatLng{Latitude: 51.5, Longitude: -0.125},
		"ref":     ref,
		"list":    []interface{}{int64(1), "two", []byte{3}, map[string]interface{}{"four": 4.5}},
		"nested":  map[string]interface{}{"a.b": map[string]interface{}{"`c`": int64(7)}},
		"empties": map[string]interface{}{"list": []interface{}{}, "map": map[string]interface{}{}},
	}
	doc := coll.Doc("values")
	if _, err := doc.Set(ctx, data); err != nil {
		t.Fatal(err)
	}
	snap, err := doc.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := snap.Data()
	if gotRef, ok := got["ref"].(*firestore.DocumentRef); !ok || gotRef.Path != ref.Path {
		t.Fatalf("ref: got %#v, want %s", got["ref"], ref.Path)
	}
	if gotAt, ok := got["at"].(time.Time); !ok || !gotAt.Equal(at) {
		t.Fatalf("at: got %v, want %v", got["at"], at)
	}
	// Protobuf messages carry internal state that DeepEqual would compare.
	if where, ok := got["where"].(*latlng.LatLng); !ok || where.GetLatitude() != 51.5 || where.GetLongitude() != -0.125 {
		t.Fatalf("where: got %v", got["where"])
	}
	for _, key := range []string{"ref", "at", "where"} {
		delete(got, key)
		delete(data, key)
	}
	if !reflect.DeepEqual(got, data) {
		t.Fatalf("round trip changed the document:\n got %#v\nwant %#v", got, data)
	}

	// NaN is stored and matched by equality, as Firestore does.
	if _, err := coll.Doc("nan").Set(ctx, map[string]interface{}{"x": math.NaN()}); err != nil {
		t.Fatal(err)
	}
	if found := ids(t, coll.Where("x", "==", math.NaN()).Documents(ctx)); !reflect.DeepEqual(found, []string{"nan"}) {
		t.Fatalf("x == NaN found %v", found)
	}
}

func TestPreconditionsAnswerWithTheirCodes(t *testing.T) {
	ctx := context.Background()
	coll := collection(t)
	doc := coll.Doc("d")

	_, err := doc.Update(ctx, []firestore.Update{{Path: "a", Value: 1}})
	wantCode(t, "update of a missing document", err, codes.NotFound)

	first, err := doc.Create(ctx, map[string]interface{}{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = doc.Create(ctx, map[string]interface{}{"a": 2})
	wantCode(t, "create of an existing document", err, codes.AlreadyExists)

	second, err := doc.Update(ctx, []firestore.Update{{Path: "a", Value: 3}}, firestore.LastUpdateTime(first.UpdateTime))
	if err != nil {
		t.Fatal("update at the current version:", err)
	}
	if !second.UpdateTime.After(first.UpdateTime) {
		t.Fatalf("update time did not advance: %v then %v", first.UpdateTime, second.UpdateTime)
	}
	_, err = doc.Delete(ctx, firestore.LastUpdateTime(first.UpdateTime))
	wantCode(t, "delete at a stale version", err, codes.FailedPrecondition)

	snap, err := doc.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := snap.DataAt("a"); a != int64(3) {
		t.Fatalf("a is %v after the refused writes", a)
	}
}

func TestAFailingBatchWritesNothing(t *testing.T) {
	ctx := context.Background()
	coll := collection(t)
	if _, err := coll.Doc("taken").Create(ctx, map[string]interface{}{"v": 1}); err != nil {
		t.Fatal(err)
	}
	_, err := client.Batch().
		Set(coll.Doc("fresh"), map[string]interface{}{"v": 2}).
		Create(coll.Doc("taken"), map[string]interface{}{"v": 3}).
		Commit(ctx)
	wantCode(t, "batch with a create of an existing document", err, codes.AlreadyExists)
	_, err = coll.Doc("fresh").Get(ctx)
	wantCode(t, "the batch's other write", err, codes.NotFound)
}

func TestOversizedDocumentIsRefused(t *testing.T) {
	ctx := context.Background()
	doc := collection(t).Doc("big")
	_, err := doc.Set(ctx, map[string]interface{}{"blob": []byte(strings.Repeat("x", 1<<20))})
	wantCode(t, "a document over 1 MiB", err, codes.InvalidArgument)
	_, err = doc.Get(ctx)
	wantCode(t, "the refused document", err, codes.NotFound)
}

func TestQueriesWithInArrayContainsAnySelectAndOffset(t *testing.T) {
	ctx := context.Background()
	coll := collection(t)
	songs := map[string]map[string]interface{}{
		"s1": {"genre": "jazz", "tags": []interface{}{"live", "piano"}, "plays": 10},
		"s2": {"genre": "rock", "tags": []interface{}{"studio"}, "plays": 30},
		"s3": {"genre": "folk", "tags": []interface{}{"live"}, "plays": 20},
		"s4": {"genre": "jazz", "tags": []interface{}{"studio", "sax"}, "plays": 40},
	}
	for id, data := range songs {
		if _, err := coll.Doc(id).Set(ctx, data); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, q firestore.Query, want ...string) {
		t.Helper()
		if got := ids(t, q.Documents(ctx)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
	check("in", coll.Where("genre", "in", []string{"jazz", "folk"}).OrderBy("plays", firestore.Asc), "s1", "s3", "s4")
	check("array-contains-any", coll.Where("tags", "array-contains-any", []string{"sax", "piano"}), "s1", "s4")
	check("array-contains", coll.Where("tags", "array-contains", "live").OrderBy("plays", firestore.Desc), "s3", "s1")
	check("offset", coll.OrderBy("plays", firestore.Desc).Offset(1).Limit(2), "s2", "s3")

	selected, err := coll.Select("genre").Where("plays", ">=", 30).Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(selected) != 2 {
		t.Fatalf("select found %d documents", len(selected))
	}
	for _, s := range selected {
		if !reflect.DeepEqual(s.Data(), map[string]interface{}{"genre": songs[s.Ref.ID]["genre"]}) {
			t.Fatalf("select(genre) of %s gave %v", s.Ref.ID, s.Data())
		}
	}
}

func TestCollectionGroupPagesWithCursors(t *testing.T) {
	ctx := context.Background()
	books := collection(t)
	group := strings.ReplaceAll(books.ID, "Test", "reviews")
	var want []string
	for i := 0; i < 7; i++ {
		id := fmt.Sprintf("r%d", i)
		review := books.Doc(fmt.Sprintf("book%d", i%3)).Collection(group).Doc(id)
		if _, err := review.Set(ctx, map[string]interface{}{"stars": i % 4}); err != nil {
			t.Fatal(err)
		}
	}
	// Ordered by stars, then by full path: the document id breaks ties across parents.
	all, err := client.CollectionGroup(group).OrderBy("stars", firestore.Asc).OrderBy(firestore.DocumentID, firestore.Asc).Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range all {
		want = append(want, d.Ref.Path)
	}
	if len(want) != 7 {
		t.Fatalf("the group holds %d reviews, want 7", len(want))
	}
	var paged []string
	q := client.CollectionGroup(group).OrderBy("stars", firestore.Asc).OrderBy(firestore.DocumentID, firestore.Asc).Limit(3)
	page := q
	for {
		docs, err := page.Documents(ctx).GetAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			paged = append(paged, d.Ref.Path)
		}
		if len(docs) < 3 {
			break
		}
		page = q.StartAfter(docs[len(docs)-1])
	}
	if !reflect.DeepEqual(paged, want) {
		t.Fatalf("pages gave\n%v\nwant\n%v", paged, want)
	}
	stars := make([]int64, len(all))
	for i, d := range all {
		v, _ := d.DataAt("stars")
		stars[i] = v.(int64)
	}
	if !sort.SliceIsSorted(stars, func(i, j int) bool { return stars[i] < stars[j] }) {
		t.Fatalf("stars out of order: %v", stars)
	}
}

func TestDocumentRefsIncludeParentsThatOnlyHoldSubcollections(t *testing.T) {
	ctx := context.Background()
	coll := collection(t)
	if _, err := coll.Doc("present").Set(ctx, map[string]interface{}{"x": 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Doc("absent").Collection("inner").Doc("child").Set(ctx, map[string]interface{}{"x": 2}); err != nil {
		t.Fatal(err)
	}
	refs, err := coll.DocumentRefs(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.ID)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"absent", "present"}) {
		t.Fatalf("DocumentRefs gave %v", got)
	}
	if found := ids(t, coll.Documents(ctx)); !reflect.DeepEqual(found, []string{"present"}) {
		t.Fatalf("a query found %v; a missing parent is not a document", found)
	}
}

type result[T any] struct {
	snap T
	err  error
}

// within waits for a listener's next snapshot, so a listener that falls silent fails the test
// instead of hanging it.
func within[T any](t *testing.T, next func() (T, error)) T {
	t.Helper()
	done := make(chan result[T], 1)
	go func() {
		s, err := next()
		done <- result[T]{s, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal("listener:", r.err)
		}
		return r.snap
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot within 10 s")
		var none T
		return none
	}
}

func TestLimitedQueryListenerFollowsAddsAndDeletes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	messages := collection(t)
	it := messages.OrderBy("n", firestore.Desc).Limit(3).Snapshots(ctx)
	defer it.Stop()
	if s := within(t, it.Next); s.Size != 0 {
		t.Fatalf("first snapshot of an empty collection has %d documents", s.Size)
	}
	// Wait for each write's snapshot, so every change arrives alone.
	for n := 1; n <= 5; n++ {
		if _, err := messages.Doc(fmt.Sprintf("m%d", n)).Set(ctx, map[string]interface{}{"n": n, "at": firestore.ServerTimestamp}); err != nil {
			t.Fatal(err)
		}
		s := within(t, it.Next)
		if n > 3 {
			if len(s.Changes) != 2 || s.Changes[0].Kind != firestore.DocumentRemoved || s.Changes[1].Kind != firestore.DocumentAdded {
				t.Fatalf("after m%d: changes %v, want one removal and one addition", n, kinds(s.Changes))
			}
		}
	}
	if _, err := messages.Doc("m5").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	s := within(t, it.Next)
	if got := ids(t, s.Documents); !reflect.DeepEqual(got, []string{"m4", "m3", "m2"}) {
		t.Fatalf("after deleting m5 the window is %v", got)
	}
	if len(s.Changes) != 2 || s.Changes[0].Doc.Ref.ID != "m5" || s.Changes[0].Kind != firestore.DocumentRemoved ||
		s.Changes[1].Doc.Ref.ID != "m2" || s.Changes[1].Kind != firestore.DocumentAdded || s.Changes[1].NewIndex != 2 {
		t.Fatalf("after deleting m5: changes %v", kinds(s.Changes))
	}
	if at, err := s.Changes[1].Doc.DataAt("at"); err != nil || at.(time.Time).IsZero() {
		t.Fatalf("the server timestamp came back as %v (%v)", at, err)
	}
}

func kinds(changes []firestore.DocumentChange) []string {
	names := map[firestore.DocumentChangeKind]string{firestore.DocumentAdded: "added", firestore.DocumentRemoved: "removed", firestore.DocumentModified: "modified"}
	var out []string
	for _, c := range changes {
		out = append(out, names[c.Kind]+" "+c.Doc.Ref.ID)
	}
	return out
}

func TestWatchedDocumentIsDeletedAndCreatedAgain(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	doc := collection(t).Doc("checkin")
	it := doc.Snapshots(ctx)
	defer it.Stop()
	snapshot := func() *firestore.DocumentSnapshot {
		t.Helper()
		return within(t, it.Next)
	}
	if s := snapshot(); s.Exists() {
		t.Fatal("a missing document was reported as existing")
	}
	steps := []struct {
		write  func() error
		exists bool
		status interface{}
	}{
		{func() error { _, err := doc.Set(ctx, map[string]interface{}{"status": "safe"}); return err }, true, "safe"},
		{func() error { _, err := doc.Delete(ctx); return err }, false, nil},
		{func() error { _, err := doc.Set(ctx, map[string]interface{}{"status": "help"}); return err }, true, "help"},
	}
	for i, step := range steps {
		if err := step.write(); err != nil {
			t.Fatal(err)
		}
		s := snapshot()
		if s.Exists() != step.exists {
			t.Fatalf("step %d: exists %v, want %v", i, s.Exists(), step.exists)
		}
		if step.exists {
			if v, _ := s.DataAt("status"); v != step.status {
				t.Fatalf("step %d: status %v, want %v", i, v, step.status)
			}
		}
	}
}
