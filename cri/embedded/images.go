package embedded

import (
	"context"
	"maps"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imageSize is the size every image reports; the CRI client rejects an
// image status of size 0.
const imageSize = 1 << 20

// PullImage makes any image present at once; its ID and reference are its
// name. Images are never changed, so responses may share them.
func (s *service) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	spec := req.GetImage()
	if spec.GetImage() == "" {
		return nil, status.Error(codes.InvalidArgument, "no image to pull")
	}
	if s.images[spec.Image] == nil {
		s.images[spec.Image] = &runtimeapi.Image{
			Id:       spec.Image,
			RepoTags: []string{spec.Image},
			Spec:     proto.Clone(spec).(*runtimeapi.ImageSpec),
			Size:     imageSize,
		}
	}
	return &runtimeapi.PullImageResponse{ImageRef: spec.Image}, nil
}

// ImageStatus answers no image, and no error, for one not pulled.
func (s *service) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	return &runtimeapi.ImageStatusResponse{Image: s.images[req.GetImage().GetImage()]}, nil
}

// RemoveImage removes the image; removing it again is no error.
func (s *service) RemoveImage(_ context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	delete(s.images, req.GetImage().GetImage())
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo reports no filesystem: images are kept in memory. The CRI
// client calls it to check the image service answers.
func (s *service) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	return &runtimeapi.ImageFsInfoResponse{}, nil
}

func (s *service) ListImages(_ context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	return &runtimeapi.ListImagesResponse{Images: s.listImages(req.Filter)}, nil
}

// StreamImages sends the list in one message.
func (s *service) StreamImages(req *runtimeapi.StreamImagesRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamImagesResponse]) error {
	return stream.Send(&runtimeapi.StreamImagesResponse{Images: s.listImages(req.Filter)})
}

// listImages lists the images tagged with f's image name (all for none),
// by name.
func (s *service) listImages(f *runtimeapi.ImageFilter) []*runtimeapi.Image {
	list := []*runtimeapi.Image{}
	for _, name := range slices.Sorted(maps.Keys(s.images)) {
		img := s.images[name]
		if f.GetImage() == nil || slices.Contains(img.RepoTags, f.Image.Image) {
			list = append(list, img)
		}
	}
	return list
}
