package notify_test

import (
	"fmt"

	"wilco/notify"
)

// A receiver checks X-Wilco-Signature against the raw body with the
// hook's secret.
func ExampleVerify() {
	body := []byte(`{"id":"N-1","event":"escalated","task_id":"T-3"}`)
	header := notify.Sign("s3cr3t", body) // what wilco sends
	fmt.Println(header)
	fmt.Println(notify.Verify("s3cr3t", body, header), notify.Verify("another", body, header))
	// Output:
	// sha256=326d9013853e6eeefb40c9f342c9b745b93f681ed8cefd9bc5090e570156cb35
	// true false
}
