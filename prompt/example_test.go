package prompt_test

import (
	"fmt"

	"github.com/dshd/dshd/prompt"
)

func ExampleRenderWith() {
	vars := prompt.Vars{"model": "deepseek-chat"}
	// The resolver rescues a variable nobody registered.
	rescue := func(name string) (string, bool) {
		if name == "cwd" {
			return "/home/dev/shop", true
		}
		return "", false
	}
	out, err := prompt.RenderWith("{{model}} in {{cwd}}; }} and {{ stay", vars, rescue)
	fmt.Println(out, err)

	_, err = prompt.Render("{{constructor}}", vars)
	fmt.Println(err)
	// Output:
	// deepseek-chat in /home/dev/shop; }} and {{ stay <nil>
	// prompt: line 1, column 1: unknown variable "constructor"; registered variables: model
}
