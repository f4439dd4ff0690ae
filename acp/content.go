// content.go: content blocks and embedded resources (acp-v1 §11).

package acp

import (
	"encoding/json"

	"github.com/dshd/dshd/acp/internal/jsontext"
)

// ContentBlock is one block of a prompt, a message chunk or tool output
// (acp-v1 §11): *TextContent, *ImageContent, *AudioContent, *ResourceLink or
// *EmbeddedResource.
type ContentBlock interface {
	// ContentType returns the block's `type` tag.
	ContentType() string
	isContentBlock()
}

// Annotations are optional display hints on a content block (acp-v1 §11).
type Annotations struct {
	Audience     []Role   `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
	Meta         Meta     `json:"_meta,omitempty"`
}

// TextContent is a `text` block.
type TextContent struct {
	Text        string       `json:"text"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ImageContent is an `image` block; Data is base64.
type ImageContent struct {
	Data        string       `json:"data"`
	MimeType    string       `json:"mimeType"`
	URI         string       `json:"uri,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// AudioContent is an `audio` block; Data is base64.
type AudioContent struct {
	Data        string       `json:"data"`
	MimeType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceLink is a `resource_link` block.
type ResourceLink struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	MimeType    string       `json:"mimeType,omitempty"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// EmbeddedResource is a `resource` block.
type EmbeddedResource struct {
	Resource    EmbeddedResourceResource `json:"resource"`
	Annotations *Annotations             `json:"annotations,omitempty"`
	Meta        Meta                     `json:"_meta,omitempty"`
}

// EmbeddedResourceResource is the payload of an [EmbeddedResource]:
// *TextResourceContents or *BlobResourceContents, told apart by shape.
type EmbeddedResourceResource interface {
	isEmbeddedResourceResource()
}

// TextResourceContents is a text resource.
type TextResourceContents struct {
	URI      string `json:"uri"`
	Text     string `json:"text"`
	MimeType string `json:"mimeType,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// BlobResourceContents is a binary resource; Blob is base64.
type BlobResourceContents struct {
	URI      string `json:"uri"`
	Blob     string `json:"blob"`
	MimeType string `json:"mimeType,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

func (*TextContent) isContentBlock()                      {}
func (*ImageContent) isContentBlock()                     {}
func (*AudioContent) isContentBlock()                     {}
func (*ResourceLink) isContentBlock()                     {}
func (*EmbeddedResource) isContentBlock()                 {}
func (*TextResourceContents) isEmbeddedResourceResource() {}
func (*BlobResourceContents) isEmbeddedResourceResource() {}

// ContentType implements ContentBlock.
func (*TextContent) ContentType() string { return ContentTypeText }

// ContentType implements ContentBlock.
func (*ImageContent) ContentType() string { return ContentTypeImage }

// ContentType implements ContentBlock.
func (*AudioContent) ContentType() string { return ContentTypeAudio }

// ContentType implements ContentBlock.
func (*ResourceLink) ContentType() string { return ContentTypeResourceLink }

// ContentType implements ContentBlock.
func (*EmbeddedResource) ContentType() string { return ContentTypeResource }

// TextBlock returns a text content block.
func TextBlock(text string) *TextContent { return &TextContent{Text: text} }

// ImageBlock returns an image content block from base64 data.
func ImageBlock(mimeType, base64Data string) *ImageContent {
	return &ImageContent{MimeType: mimeType, Data: base64Data}
}

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (c TextContent) MarshalJSON() ([]byte, error) { return marshalVariant("type", ContentTypeText, c) }

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (c ImageContent) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", ContentTypeImage, c)
}

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (c AudioContent) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", ContentTypeAudio, c)
}

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (c ResourceLink) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", ContentTypeResourceLink, c)
}

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (c EmbeddedResource) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", ContentTypeResource, c)
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *EmbeddedResource) UnmarshalJSON(b []byte) error { return embeddedDecoder.decode(b, c) }

var embeddedDecoder = newObjectDecoder[EmbeddedResource](unionMember("resource", UnmarshalEmbeddedResourceResource))

// UnmarshalContentBlock decodes one content block by its `type` tag; a
// malformed optional member is absent (see [dropMalformed]).
func UnmarshalContentBlock(b []byte) (ContentBlock, error) {
	v, err := contentBlocks.decode(b)
	if err != nil {
		tag, _, _ := readTag(b, "type")
		if opt := optionalBlockMembers[tag]; opt != nil {
			return dropMalformed(b, err, contentBlocks.decode, []string{"type"}, opt...)
		}
	}
	return v, err
}

var contentBlocks = taggedUnion[ContentBlock]{name: "content block", key: "type",
	variants: map[string]func() ContentBlock{
		ContentTypeText:         func() ContentBlock { return new(TextContent) },
		ContentTypeImage:        func() ContentBlock { return new(ImageContent) },
		ContentTypeAudio:        func() ContentBlock { return new(AudioContent) },
		ContentTypeResourceLink: func() ContentBlock { return new(ResourceLink) },
		ContentTypeResource:     func() ContentBlock { return new(EmbeddedResource) },
	}}

// UnmarshalEmbeddedResourceResource decodes a resource payload: a `blob` key
// makes it binary, otherwise it must have `text`.
func UnmarshalEmbeddedResourceResource(b []byte) (EmbeddedResourceResource, error) {
	var hasText, hasBlob bool
	if err := jsontext.ScanObject(b, func(k, _ []byte) bool {
		hasText = hasText || jsontext.KeyIs(k, "text")
		hasBlob = hasBlob || jsontext.KeyIs(k, "blob")
		return true
	}); err != nil {
		return nil, &badValueError{reason: "must be an object"}
	}
	var dec func([]byte) (EmbeddedResourceResource, error)
	switch {
	case hasBlob:
		dec = func(b []byte) (EmbeddedResourceResource, error) { return decodeInto(b, new(BlobResourceContents)) }
	case hasText:
		dec = func(b []byte) (EmbeddedResourceResource, error) { return decodeInto(b, new(TextResourceContents)) }
	default:
		return nil, &badValueError{key: "text", reason: "required (or blob)"}
	}
	v, err := dec(b)
	if err != nil {
		// A malformed mimeType is absent.
		return dropMalformed(b, err, dec, []string{"text", "blob"}, "mimeType")
	}
	return v, nil
}

// decodeInto decodes b into v and returns v as an embedded resource.
func decodeInto[T EmbeddedResourceResource](b []byte, v T) (EmbeddedResourceResource, error) {
	if err := json.Unmarshal(b, v); err != nil {
		return nil, err
	}
	return v, nil
}

// validateContentBlock checks the required fields of a block received in a
// request.
func validateContentBlock(field string, c ContentBlock) error {
	switch b := c.(type) {
	case nil:
		return invalidField(field, "required")
	case *ImageContent:
		if b.MimeType == "" {
			return invalidField(field+".mimeType", "required")
		}
	case *AudioContent:
		if b.MimeType == "" {
			return invalidField(field+".mimeType", "required")
		}
	case *ResourceLink:
		if b.URI == "" || b.Name == "" {
			return invalidField(field, "uri and name are required")
		}
	case *EmbeddedResource:
		if b.Resource == nil {
			return invalidField(field+".resource", "required")
		}
	}
	return nil
}
